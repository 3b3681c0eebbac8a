/**
 * Scenarios 7-8, the edge BFF: public catalog reads (`GET /api/v1/products`) against the bare
 * Fastify hello-world, and GraphQL checkouts (each a stock reservation, an order, its lines, an
 * outbox event and a cleared cart, in one commerce transaction) against those catalog reads.
 */
import { randomUUID } from 'node:crypto';
import { type LoadResult, type ScenarioRow, cannon, closedLoop, r1, r2 } from './load';


export async function edgeScenarios(opts: {
  base: string;
  adminToken: string;
  customerTokens: string[];
  helloPerSecond: number;
  seconds: number;
  repeat: (fn: () => Promise<LoadResult>) => Promise<LoadResult>;
  log: (s: string) => void;
}): Promise<ScenarioRow[]> {
  const gql = async (token: string | undefined, query: string, variables: Record<string, unknown> = {}) => {
    const r = await fetch(`${opts.base}/api/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const json = (await r.json()) as { data?: Record<string, { id?: string }>; errors?: unknown[] };
    return { status: r.status, json };
  };

  // A product with stock for every checkout of the run.
  const created = await gql(
    opts.adminToken,
    'mutation($i: CreateProductInput!) { createProduct(input: $i) { id } }',
    { i: { sku: `BENCH-${randomUUID().slice(0, 8)}`, name: `Bench item ${randomUUID().slice(0, 8)}`, description: 'for make bench', priceMinor: 1999, currency: 'EUR', onHand: 10_000_000 } },
  );
  const productId = created.json.data?.createProduct?.id;
  if (!productId) throw new Error(`could not create the bench product: ${JSON.stringify(created.json)}`);

  opts.log('\n7. GET /api/v1/products (public catalog) vs bare Fastify');
  const catalog = await opts.repeat(() => cannon({ url: `${opts.base}/api/v1/products?page_size=20`, connections: 16, duration: opts.seconds }));
  opts.log(`   products ${r1(catalog.ok)}/s p99 ${r1(catalog.p99)} ms`);

  opts.log('\n8. GraphQL checkout/s');
  const mutation = 'mutation($i: CheckoutInput!) { checkout(input: $i) { id status totalMinor } }';
  let firstFailure = '';
  const checkout = await opts.repeat(() =>
    closedLoop(opts.seconds, 16, async (worker) => {
      const token = opts.customerTokens[worker % opts.customerTokens.length];
      const r = await gql(token, mutation, { i: { idempotencyKey: randomUUID(), lines: [{ productId, quantity: 1 }] } });
      const ok = r.status === 200 && !r.json.errors;
      // The first failure says why (a run of failures is otherwise only a count).
      if (!ok && !firstFailure) firstFailure = `${r.status} ${JSON.stringify(r.json).slice(0, 300)}`;
      return ok ? 200 : 500;
    }),
  );
  opts.log(`   checkout ${r1(checkout.ok)}/s p99 ${r1(checkout.p99)} ms (${checkout.non2xx} failed${firstFailure ? `; the first: ${firstFailure}` : ''})`);

  return [
    {
      scenario: '7. GET /api/v1/products req/s ÷ hello-world req/s (16 connections)',
      value: `${r1(catalog.ok)}/s (p99 ${r1(catalog.p99)} ms)`,
      baseline: `${r1(opts.helloPerSecond)}/s`,
      ratio: r2(catalog.ok / opts.helloPerSecond),
      target: '—',
      met: catalog.non2xx === 0 && catalog.errors === 0,
    },
    {
      scenario: '8. GraphQL checkout/s ÷ GET /api/v1/products req/s (16 workers, one product)',
      value: `${r1(checkout.ok)}/s (p99 ${r1(checkout.p99)} ms, ${checkout.non2xx} failed)`,
      baseline: `${r1(catalog.ok)}/s`,
      ratio: r2(checkout.ok / catalog.ok),
      target: 'no failure',
      met: checkout.non2xx === 0 && checkout.errors === 0,
    },
  ];
}
