/**
 * The edge profile through app.inject against the real commerce service (in-process, on a fresh
 * database): /healthz, the public products, and /api/v1/graphql (auth per field, scoping, checkout
 * refusals as extensions.code, one catalog call per response, administration gated by
 * products.manage, document limits, transport errors as problem+json; introspection and the
 * checkout limits per setting, the limits shared through Redis). Every response is checked
 * against the edge OpenAPI document. Tokens come from a fake authenticator (the end-to-end tests
 * use real ones).
 */
import type { commerceV1 } from '@iam/contracts';
import { commerceService, readCommerceConfig } from '@iam/commerce';
import { type AccessClaims, AppError, HealthMonitor, Lifecycle, type RunningService, readConfig, startService } from '@iam/platform';
import { TEST_CALL_KEY, TestAccess, type TestDatabase, actingAs, createTestDatabase, eventually, startAccessServer, testBus, testLogger, testMetrics, testSigner } from '@iam/platform/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import { randomUUID } from 'node:crypto';
import { buildApp } from '../../app';
import type { Authenticator } from '../../auth/authenticator';
import { Denylist } from '../../auth/denylist';
import { readGatewayConfig } from '../../config';
import { ResponseChecker } from '../../docs/response-check';
import { type CommerceClients, type Upstreams, createUpstreams } from '../../upstreams';

const logger = testLogger();

function claims(over: Partial<AccessClaims> = {}): AccessClaims {
  const now = Math.floor(Date.now() / 1000);
  const sub = over.sub ?? randomUUID();
  return { sub, jti: randomUUID(), iss: 'iam', aud: ['iam-api'], iat: now, nbf: now, exp: now + 300, email: `${sub}@example.com`, roles: [], permissions: [], ...over };
}

const TOKENS = {
  alice: claims(),
  bob: claims(),
  manager: claims({ permissions: ['products.manage'] }),
  admin: claims({ roles: ['Administrator'] }),
  carol: claims(),
  dave: claims(),
  erin: claims(),
};
type Who = keyof typeof TOKENS;

const authenticator: Authenticator = {
  verify: async (token) => {
    const c = TOKENS[token as Who];
    if (!c) throw AppError.unauthenticated('The access token is not valid.');
    return c;
  },
};

interface Gql {
  status: number;
  headers: LightMyRequestResponse['headers'];
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- GraphQL data is checked field by field
  errors: Array<{ message: string; path?: Array<string | number>; extensions: { code: string; errors?: Array<{ field: string; message: string }> } }> | undefined;
  codes: string[];
  ms: number;
}

/** The commerce clients, each call counted by method (the loader tests count BatchGetProducts). */
function counting(c: CommerceClients, calls: string[]): CommerceClients {
  const wrap = <T extends object>(client: T): T =>
    new Proxy(client, {
      get: (t, k) => {
        const fn = (t as Record<string | symbol, unknown>)[k];
        return typeof fn === 'function' ? (...args: unknown[]) => (calls.push(String(k)), (fn as (...a: unknown[]) => unknown).apply(t, args)) : fn;
      },
    });
  return { catalog: wrap(c.catalog), carts: wrap(c.carts), orders: wrap(c.orders) };
}

interface Gateway {
  app: FastifyInstance;
  upstreams: Upstreams;
  checker: ResponseChecker;
  close(): Promise<void>;
}

async function gateway(env: Record<string, string>, calls: string[] = [], opts = { commerceUp: true }): Promise<Gateway> {
  const config = readConfig({ GATEWAY_PROFILES: 'edge', MAX_EVENT_LOOP_DELAY_MS: '0', ...env }, readGatewayConfig);
  const metrics = testMetrics();
  const bus = testBus({ logger });
  const raw = createUpstreams(config, { metrics, bus, signer: testSigner('gateway') });
  const upstreams: Upstreams = { ...raw, commerce: raw.commerce && counting(raw.commerce, calls) };
  const health = new HealthMonitor({ checks: upstreams.checks, logger });
  // The first check opens the gRPC connection; on a loaded machine that can take longer than a
  // check's timeout, so wait for commerce to be up, as a probe would, rather than trust the first
  // run. (The other upstreams are not running here: the edge profile does not need them.)
  const commerceUp = async () => Object.entries((await health.refresh()).checks).every(([k, v]) => !k.startsWith('commerce') || v === 'up');
  if (opts.commerceUp) await eventually(commerceUp, 20_000, 100);
  else await health.refresh();
  const app = await buildApp({ config, logger, metrics, health, upstreams, authenticator, denylist: new Denylist() });
  await app.ready();
  const doc = (await app.inject({ url: '/docs/edge/openapi.json' })).json<ConstructorParameters<typeof ResponseChecker>[0][number]>();
  const close = async () => {
    await app.close();
    upstreams.close();
    await bus.close();
  };
  return { app, upstreams, checker: new ResponseChecker([doc]), close };
}

describe('edge profile (real commerce service)', () => {
  let db: TestDatabase;
  let commerce: RunningService;
  const lifecycle = new Lifecycle(logger, 5_000);
  const bus = testBus({ logger });
  const calls: string[] = [];
  let gw: Gateway;
  // The directory as commerce asks it who may administer the catalog now.
  let directory: Awaited<ReturnType<typeof startAccessServer>>;

  beforeAll(async () => {
    db = await createTestDatabase('gw_edge');
    directory = await startAccessServer(new TestAccess().grant(TOKENS.manager.sub, 'products.manage').grant(TOKENS.admin.sub, 'products.manage'), logger, TEST_CALL_KEY);
    const config = readConfig({ COMMERCE_GRPC_PORT: '0', DIRECTORY_GRPC_TARGET: directory.target }, (e) => readCommerceConfig(e, { databaseUrl: db.url }));
    const rt = { logger, metrics: testMetrics(), bus, lifecycle, bindHost: '127.0.0.1', callKey: TEST_CALL_KEY };
    commerce = await startService(commerceService(config, rt), rt);
    gw = await gateway({ COMMERCE_GRPC_TARGET: `127.0.0.1:${commerce.grpcPort}`, RATE_LIMIT_CHECKOUT_BURST: '1000', RATE_LIMIT_CHECKOUT_PER_MINUTE: '100000' }, calls);
  });

  afterAll(async () => {
    await gw?.close();
    await lifecycle.shutdown('test done');
    await directory?.close();
    await bus.close();
    await db?.drop();
  });

  /** An HTTP call, its response checked against the edge OpenAPI document. */
  async function http(method: 'GET' | 'POST', url: string, opts: { payload?: unknown; headers?: Record<string, string>; g?: Gateway; from?: string } = {}): Promise<LightMyRequestResponse> {
    const g = opts.g ?? gw;
    const res = await g.app.inject({ method, url, payload: opts.payload as string, headers: opts.headers, remoteAddress: opts.from });
    let body: unknown = res.body;
    try {
      body = res.body ? JSON.parse(res.body) : null;
    } catch {
      // text stays text
    }
    const problems = g.checker.check(method, `http://gw${url}`, res.statusCode, String(res.headers['content-type'] ?? '') || null, body);
    expect(problems).toEqual([]);
    return res;
  }

  /** `from`: the client's address (127.0.0.1 unless given). */
  async function gql(query: string, opts: { who?: Who; token?: string; variables?: Record<string, unknown>; g?: Gateway; from?: string } = {}): Promise<Gql> {
    const token = opts.token ?? opts.who;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const started = process.hrtime.bigint();
    const res = await http('POST', '/api/v1/graphql', { payload: JSON.stringify({ query, variables: opts.variables }), headers, g: opts.g, from: opts.from });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const body = res.json<{ data?: unknown; errors?: Gql['errors'] }>();
    expect(res.body).not.toMatch(/stack|\.ts:\d+|\.js:\d+|node_modules/);
    return { status: res.statusCode, headers: res.headers, data: body.data, errors: body.errors, codes: (body.errors ?? []).map((e) => e.extensions.code), ms };
  }

  const catalog = () => gw.upstreams.commerce!;
  const asManager = <T>(fn: () => Promise<T>): Promise<T> => actingAs(TOKENS.manager.sub, fn);
  const newProduct = (over: Partial<{ onHand: number; priceMinor: number; name: string; currency: string }> = {}): Promise<commerceV1.Product> =>
    asManager(() =>
      catalog().catalog.createProduct({
        sku: `E-${randomUUID().slice(0, 8).toUpperCase()}`,
        name: over.name ?? `Edge widget ${randomUUID().slice(0, 8)}`,
        description: 'A widget',
        priceMinor: over.priceMinor ?? 1_999,
        currency: over.currency ?? 'EUR',
        onHand: over.onHand ?? 10,
      }),
    );

  describe('REST', () => {
    it('GET /healthz → 200 {status: ok} while commerce serves; readiness counts commerce', async () => {
      const res = await http('GET', '/healthz');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
      const ready = await http('GET', '/health/ready');
      expect(ready.json().checks).toMatchObject({ commerce: 'up', 'commerce.db': 'up' });
    });

    it('GET /api/v1/products: public, paged by an opaque token, filtered by status and q; only the listed fields', async () => {
      const tag = randomUUID().slice(0, 8);
      const made: commerceV1.Product[] = [];
      for (let i = 0; i < 5; i++) made.push(await newProduct({ name: `Paged ${tag} ${i}` }));
      await asManager(() => catalog().catalog.archiveProduct({ id: made[4]!.id }));
      const seen: string[] = [];
      let token: string | null = null;
      let pages = 0;
      do {
        const qs: string = `page_size=2&q=${tag}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;
        const res = await http('GET', `/api/v1/products?${qs}`);
        expect(res.statusCode).toBe(200);
        const body = res.json<{ products: Array<Record<string, unknown>>; nextPageToken: string | null }>();
        expect(body.products.length).toBeLessThanOrEqual(2);
        for (const p of body.products) {
          expect(Object.keys(p).sort()).toEqual(['available', 'currency', 'description', 'id', 'name', 'priceMinor', 'sku', 'status']);
          seen.push(p.id as string);
        }
        token = body.nextPageToken;
        pages++;
      } while (token !== null && pages < 10);
      expect(seen).toEqual(made.map((p) => p.id));
      expect(pages).toBe(3);

      const active = (await http('GET', `/api/v1/products?q=${tag}&status=active`)).json<{ products: Array<{ status: string }> }>();
      expect(active.products).toHaveLength(4);
      const archived = (await http('GET', `/api/v1/products?q=${tag}&status=archived`)).json<{ products: Array<{ id: string; status: string }> }>();
      expect(archived.products).toEqual([expect.objectContaining({ id: made[4]!.id, status: 'ARCHIVED' })]);
      const first = (await http('GET', '/api/v1/products')).json<{ products: unknown[] }>();
      expect(first.products.length).toBeLessThanOrEqual(20);
    });

    it('bad parameters → 400 problem+json naming the query field', async () => {
      const bad: Array<[string, string]> = [
        ['page_size=0', 'querystring.page_size'],
        ['page_size=101', 'querystring.page_size'],
        ['page_size=abc', 'querystring.page_size'],
        ['status=deleted', 'querystring.status'],
        [`q=${'x'.repeat(201)}`, 'querystring.q'],
        ['page_token=not-a-token', 'querystring.page_token'],
        [`page_token=${'A'.repeat(201)}`, 'querystring.page_token'],
      ];
      for (const [qs, field] of bad) {
        const res = await http('GET', `/api/v1/products?${qs}`);
        expect({ qs, status: res.statusCode, type: res.headers['content-type'] }).toEqual({ qs, status: 400, type: 'application/problem+json' });
        expect(res.json().errors?.[0]?.field).toBe(field);
      }
    });

    it('GET /api/v1/products/{id} → 200 {product}; unknown → 404; not a UUID → 400', async () => {
      const p = await newProduct({ priceMinor: 4_200, onHand: 3 });
      const res = await http('GET', `/api/v1/products/${p.id}`);
      expect(res.json()).toEqual({ product: { id: p.id, sku: p.sku, name: p.name, description: 'A widget', priceMinor: 4_200, currency: 'EUR', status: 'ACTIVE', available: 3 } });
      expect(res.headers['cache-control']).toBeUndefined();
      expect((await http('GET', `/api/v1/products/${randomUUID()}`)).statusCode).toBe(404);
      expect((await http('GET', '/api/v1/products/nope')).statusCode).toBe(400);
    });
  });

  describe('GraphQL', () => {
    const CART = '{ cart { customerId subtotalMinor currency lines { productId quantity product { id name priceMinor available } } } }';

    it('{ __typename } and products are public; the answer is not no-store', async () => {
      const r = await gql('{ __typename }');
      expect(r).toMatchObject({ status: 200, data: { __typename: 'Query' }, errors: undefined });
      const p = await newProduct({ name: `Public ${randomUUID()}` });
      const list = await gql('query($q: String) { products(q: $q, pageSize: 5, status: ACTIVE) { products { id sku priceMinor status available } nextPageToken } }', { variables: { q: p.name } });
      expect(list.data.products).toEqual({ products: [{ id: p.id, sku: p.sku, priceMinor: 1_999, status: 'ACTIVE', available: 10 }], nextPageToken: null });
      expect(list.headers['cache-control']).toBeUndefined();
      const one = await gql(`{ product(id: "${p.id}") { name } missing: product(id: "${randomUUID()}") { name } }`);
      expect(one.data).toEqual({ product: { name: p.name }, missing: null });
      expect((await gql('{ product(id: "nope") { name } }')).codes).toEqual(['BAD_USER_INPUT']);
    });

    it('pageSize: null means the default page, not an internal error (found by the property tests)', async () => {
      for (const who of [undefined, 'alice'] as const) {
        const q = who ? '{ orders(pageSize: null) { orders { id } nextPageToken } }' : '{ products(pageSize: null) { products { id } nextPageToken } }';
        const r = await gql(q, who ? { who } : {});
        expect({ q, status: r.status, errors: r.errors }).toEqual({ q, status: 200, errors: undefined });
      }
      const viaVariable = await gql('query($n: Int) { products(pageSize: $n) { products { id } } }', { variables: { n: null } });
      expect(viaVariable.errors).toBeUndefined();
    });

    it('cart, orders and checkout need a token: UNAUTHENTICATED in extensions.code (HTTP 200); a bad token is 401', async () => {
      for (const q of [CART, '{ orders { orders { id } } }', `{ order(id: "${randomUUID()}") { id } }`, 'mutation { clearCart { customerId } }']) {
        const r = await gql(q);
        expect({ q, status: r.status, codes: r.codes }).toEqual({ q, status: 200, codes: ['UNAUTHENTICATED'] });
      }
      // The same document again runs JIT-compiled: the same answer.
      expect((await gql(CART)).codes).toEqual(['UNAUTHENTICATED']);
      const res = await http('POST', '/api/v1/graphql', { payload: JSON.stringify({ query: CART }), headers: { 'content-type': 'application/json', authorization: 'Bearer forged' } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('a cart of 30 lines and an order of 30 lines each cost ONE BatchGetProducts call', async () => {
      const products = [];
      for (let i = 0; i < 30; i++) products.push(await newProduct({ priceMinor: 100 + i }));
      const lines = products.map((p) => ({ productId: p.id, quantity: 1 }));
      const set = await gql('mutation($lines: [CartLineInput!]!) { updateCart(lines: $lines) { lines { productId } subtotalMinor currency } }', { who: 'alice', variables: { lines } });
      expect(set.errors).toBeUndefined();
      expect(set.headers['cache-control']).toBe('no-store');
      expect(set.data.updateCart).toMatchObject({ subtotalMinor: products.reduce((s, p) => s + p.priceMinor, 0), currency: 'EUR' });

      calls.length = 0;
      const cart = await gql(CART, { who: 'alice' });
      expect(cart.data.cart.customerId).toBe(TOKENS.alice.sub);
      expect(cart.data.cart.lines).toHaveLength(30);
      expect(cart.data.cart.lines.map((l: { product: { id: string } }) => l.product.id)).toEqual(products.map((p) => p.id));
      expect(calls.filter((c) => c === 'batchGetProducts')).toHaveLength(1);
      expect(calls.filter((c) => c === 'getProduct')).toHaveLength(0);

      const placed = await gql('mutation { checkout(input: {idempotencyKey: "thirty"}) { id totalMinor lines { productId } } }', { who: 'alice' });
      expect(placed.errors).toBeUndefined();
      expect(placed.data.checkout.lines).toHaveLength(30);
      calls.length = 0;
      const orders = await gql('{ orders(pageSize: 10) { orders { id lines { quantity unitPriceMinor sku name product { id available } } } } }', { who: 'alice' });
      expect(orders.data.orders.orders[0].lines).toHaveLength(30);
      expect(orders.data.orders.orders[0].lines[0].product.available).toBe(9);
      expect(calls.filter((c) => c === 'batchGetProducts')).toHaveLength(1);
      // Aliased product(id) fields share the batch too.
      calls.length = 0;
      const aliased = await gql(`{ a: product(id: "${products[0]!.id}") { id } b: product(id: "${products[1]!.id}") { id } c: product(id: "${products[0]!.id}") { id } }`);
      expect(aliased.data).toEqual({ a: { id: products[0]!.id }, b: { id: products[1]!.id }, c: { id: products[0]!.id } });
      expect(calls).toEqual(['batchGetProducts']);
    });

    it('checkout: prices from the catalog, no price input, refusals by code, idempotent replays, createOrder alias, cancel once', async () => {
      const p = await newProduct({ onHand: 3, priceMinor: 2_500 });
      const tamper = await gql(`mutation { checkout(input: {idempotencyKey: "t", lines: [{productId: "${p.id}", quantity: 1, unitPriceMinor: 1}]}) { id } }`, { who: 'bob' });
      expect(tamper.status).toBe(400);
      expect(tamper.codes).toEqual(['BAD_USER_INPUT']);
      expect(tamper.data).toBeUndefined();
      const viaVariables = await gql('mutation($i: CheckoutInput!) { checkout(input: $i) { id } }', { who: 'bob', variables: { i: { idempotencyKey: 't', lines: [{ productId: p.id, quantity: 1, priceMinor: 1 }] } } });
      expect(viaVariables.codes).toEqual(['BAD_USER_INPUT']);

      const short = await gql(`mutation { checkout(input: {idempotencyKey: "s", lines: [{productId: "${p.id}", quantity: 4}]}) { id } }`, { who: 'bob' });
      expect(short).toMatchObject({ status: 200, data: null, codes: ['INSUFFICIENT_STOCK'] });
      expect(short.errors![0]!.extensions.errors).toEqual([{ field: 'lines[0].quantity', message: expect.any(String) }]);
      expect(short.errors![0]!.path).toEqual(['checkout']);

      const ORDER = `mutation($k: String!, $q: Int!) { createOrder(input: {idempotencyKey: $k, lines: [{productId: "${p.id}", quantity: $q}]}) { id customerId status totalMinor currency createdAt lines { unitPriceMinor quantity } } }`;
      const first = await gql(ORDER, { who: 'bob', variables: { k: 'once', q: 2 } });
      expect(first.data.createOrder).toMatchObject({ customerId: TOKENS.bob.sub, status: 'CONFIRMED', totalMinor: 5_000, currency: 'EUR', lines: [{ unitPriceMinor: 2_500, quantity: 2 }] });
      expect(first.data.createOrder.createdAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
      const again = await gql(ORDER, { who: 'bob', variables: { k: 'once', q: 2 } });
      expect(again.data.createOrder.id).toBe(first.data.createOrder.id);
      const conflict = await gql(ORDER, { who: 'bob', variables: { k: 'once', q: 1 } });
      expect(conflict.codes).toEqual(['IDEMPOTENCY_CONFLICT']);
      expect((await catalog().catalog.getProduct({ id: p.id })).available).toBe(1);

      // Bob's order is invisible to Alice, and she cannot cancel it.
      const id = first.data.createOrder.id as string;
      expect((await gql(`{ order(id: "${id}") { id } }`, { who: 'alice' })).data).toEqual({ order: null });
      expect((await gql(`mutation { cancelOrder(id: "${id}") { id } }`, { who: 'alice' })).codes).toEqual(['NOT_FOUND']);
      const mine = await gql('{ orders(status: CONFIRMED) { orders { id customerId } } }', { who: 'alice' });
      expect(mine.data.orders.orders.every((o: { customerId: string }) => o.customerId === TOKENS.alice.sub)).toBe(true);

      const cancel = `mutation { cancelOrder(id: "${id}") { id status } }`;
      expect((await gql(cancel, { who: 'bob' })).data.cancelOrder).toEqual({ id, status: 'CANCELLED' });
      expect((await gql(cancel, { who: 'bob' })).data.cancelOrder).toEqual({ id, status: 'CANCELLED' });
      expect((await catalog().catalog.getProduct({ id: p.id })).available).toBe(3);
      expect((await gql(`{ order(id: "${id}") { status } }`, { who: 'bob' })).data).toEqual({ order: { status: 'CANCELLED' } });

      await asManager(() => catalog().catalog.archiveProduct({ id: p.id }));
      const gone = await gql(`mutation { checkout(input: {idempotencyKey: "g", lines: [{productId: "${p.id}", quantity: 1}]}) { id } }`, { who: 'bob' });
      expect(gone.codes).toEqual(['PRODUCT_UNAVAILABLE']);
      const cart = await gql(`mutation { updateCart(lines: [{productId: "${p.id}", quantity: 1}]) { currency } }`, { who: 'bob' });
      expect(cart.codes).toEqual(['PRODUCT_UNAVAILABLE']);
      const badQuantity = await gql(`mutation { updateCart(lines: [{productId: "${randomUUID()}", quantity: 0}]) { currency } }`, { who: 'bob' });
      expect(badQuantity.codes).toEqual(['BAD_USER_INPUT']);
    });

    it('product administration needs products.manage (or Administrator); stock never below reserved', async () => {
      const CREATE = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id sku status priceMinor stock { onHand reserved available } } }';
      const input = (sku: string) => ({ i: { sku, name: 'Managed', priceMinor: 100_000_000_000, currency: 'USD', onHand: 5 } });
      expect((await gql(CREATE, { variables: input('M-ANON') })).codes).toEqual(['UNAUTHENTICATED']);
      expect((await gql(CREATE, { who: 'alice', variables: input('M-ALICE') })).codes).toEqual(['FORBIDDEN']);
      const sku = `M-${randomUUID().slice(0, 8).toUpperCase()}`;
      const made = await gql(CREATE, { who: 'manager', variables: input(sku) });
      expect(made.data.createProduct).toMatchObject({ sku, status: 'ACTIVE', priceMinor: 100_000_000_000, stock: { onHand: 5, reserved: 0, available: 5 } });
      const id = made.data.createProduct.id as string;
      expect((await gql(CREATE, { who: 'admin', variables: input(sku) })).codes).toEqual(['BAD_USER_INPUT']);

      // The stock detail is for administrators; the public fields are for everyone.
      const peek = await gql(`{ product(id: "${id}") { name stock { onHand } } }`, { who: 'alice' });
      expect(peek.codes).toEqual(['FORBIDDEN']);
      expect((await gql(`{ product(id: "${id}") { name available } }`)).data.product).toEqual({ name: 'Managed', available: 5 });

      await gql(`mutation { checkout(input: {idempotencyKey: "adm", lines: [{productId: "${id}", quantity: 2}]}) { id } }`, { who: 'alice' });
      const ADJUST = `mutation($i: AdjustStockInput!) { adjustStock(id: "${id}", input: $i) { stock { onHand reserved available } } }`;
      expect((await gql(ADJUST, { who: 'admin', variables: { i: { setOnHand: 1 } } })).codes).toEqual(['INSUFFICIENT_STOCK']);
      expect((await gql(ADJUST, { who: 'admin', variables: { i: { delta: -4 } } })).codes).toEqual(['INSUFFICIENT_STOCK']);
      expect((await gql(ADJUST, { who: 'admin', variables: { i: { delta: 1, setOnHand: 9 } } })).codes).toEqual(['BAD_USER_INPUT']);
      expect((await gql(ADJUST, { who: 'alice', variables: { i: { delta: 1 } } })).codes).toEqual(['FORBIDDEN']);
      expect((await gql(ADJUST, { who: 'manager', variables: { i: { delta: -3 } } })).data.adjustStock.stock).toEqual({ onHand: 2, reserved: 2, available: 0 });

      const updated = await gql(`mutation { updateProduct(id: "${id}", input: {name: "Renamed", priceMinor: 150}) { name priceMinor sku } }`, { who: 'manager' });
      expect(updated.data.updateProduct).toEqual({ name: 'Renamed', priceMinor: 150, sku });
      const archived = await gql(`mutation { archiveProduct(id: "${id}") { status } }`, { who: 'manager' });
      expect(archived.data.archiveProduct).toEqual({ status: 'ARCHIVED' });
      expect((await gql(`mutation { archiveProduct(id: "${randomUUID()}") { status } }`, { who: 'manager' })).codes).toEqual(['NOT_FOUND']);
    });

    it('document limits: alias, complexity, depth, token and introspection bombs are refused in milliseconds (400, BAD_USER_INPUT); the standard introspection query passes', async () => {
      const bombs: Record<string, string> = {
        aliases: `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: products { nextPageToken }`).join(' ')} }`,
        complexity: `{ a: orders(pageSize: 100) { orders { lines { sku name product { id name sku description priceMinor currency } } } } b: orders(pageSize: 100) { orders { lines { sku name product { id name sku description priceMinor currency } } } } }`,
        depth: '{ products { products { a { b { c { d { e { f { g } } } } } } } } }',
        tokens: `{ ${'__typename '.repeat(1_001)} }`,
        introspection: '{ __schema { types { fields { type { fields { type { fields { type { fields { type { fields { name } } } } } } } } } } } }',
        duplicateFields: `{ ${'cart { lines { product { id } } } '.repeat(90)} }`,
        fragments: `{ ...F0 } ${Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { products { nextPageToken } ${i < 29 ? `...F${i + 1} ...F${i + 1}` : ''} }`).join(' ')}`,
      };
      const timings: Record<string, number> = {};
      for (const [name, query] of Object.entries(bombs)) {
        const r = await gql(query, { who: 'alice' });
        expect({ name, status: r.status, codes: r.codes.slice(0, 1), data: r.data }).toEqual({ name, status: 400, codes: ['BAD_USER_INPUT'], data: undefined });
        timings[name] = Math.round(r.ms * 10) / 10;
      }
      for (const [name, ms] of Object.entries(timings)) expect({ name, fast: ms < 250 }).toEqual({ name, fast: true });
      logger.info({ timings }, 'bomb refusal times (ms)');
      process.stdout.write(`edge bomb refusals (ms): ${JSON.stringify(timings)}\n`);

      const intro = await gql(getIntrospectionQuery({ descriptions: true }), { who: 'alice' });
      expect(intro.status).toBe(200);
      expect(intro.data.__schema.types.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['Product', 'Cart', 'Order', 'CheckoutInput']));
      const big = await gql('{ orders(pageSize: 100) { orders { id status totalMinor lines { productId quantity unitPriceMinor product { id name priceMinor } } } nextPageToken } }', { who: 'alice' });
      expect(big.errors).toBeUndefined();
    });

    it('transport errors are problem+json: malformed JSON 400, over 64 KiB 413, another content type 415, no query 400, unknown body field 400', async () => {
      const post = (payload: string, type = 'application/json') => http('POST', '/api/v1/graphql', { payload, headers: { 'content-type': type } });
      const cases: Array<[LightMyRequestResponse, number]> = [
        [await post('{"query": '), 400],
        [await post(JSON.stringify({ query: `{ __typename } #${'x'.repeat(70_000)}` })), 413],
        [await post('{ __typename }', 'text/plain'), 415],
        [await post(JSON.stringify({ variables: {} })), 400],
        [await post(JSON.stringify({ query: '{ __typename }', customerId: 'x' })), 400],
      ];
      for (const [res, status] of cases) {
        expect(res.statusCode).toBe(status);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      const get = await http('GET', `/api/v1/graphql?query=${encodeURIComponent('{ __typename }')}`);
      expect(get.json()).toEqual({ data: { __typename: 'Query' } });
      const mutation = await http('GET', `/api/v1/graphql?query=${encodeURIComponent('mutation { clearCart { currency } }')}`);
      expect(mutation.statusCode).toBe(405);
      expect(mutation.headers.allow).toBe('POST');
    });

    it('documents the REST routes and the GraphQL endpoint (not GraphiQL, which is off by default)', async () => {
      const doc = (await gw.app.inject({ url: '/docs/edge/openapi.json' })).json<{ paths: Record<string, Record<string, { security?: unknown }>> }>();
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/api/v1/products', '/api/v1/products/{id}', '/api/v1/graphql']));
      expect(doc.paths['/api/v1/graphql']!.post!.security).toEqual([{}, { bearer: [] }]);
      expect(doc.paths['/api/v1/products']!.get!.security).toBeUndefined();
      expect(Object.keys(doc.paths).some((p) => p.startsWith('/graphiql'))).toBe(false);
      expect((await gw.app.inject({ url: '/graphiql' })).statusCode).toBe(404);
    });
  });

  describe('configuration', () => {
    const target = () => ({ COMMERCE_GRPC_TARGET: `127.0.0.1:${commerce.grpcPort}` });
    // Two checkouts per subject in a window, five per address.
    const limits = { RATE_LIMIT_CHECKOUT_BURST: '2', RATE_LIMIT_CHECKOUT_PER_MINUTE: '2', RATE_LIMIT_CHECKOUT_ADDRESS_BURST: '5', RATE_LIMIT_CHECKOUT_ADDRESS_PER_MINUTE: '5' };
    let quiet: Gateway;
    let open: Gateway;
    beforeAll(async () => {
      quiet = await gateway({ ...target(), GRAPHQL_INTROSPECTION: 'off', GRAPHQL_IDE: 'true', ...limits });
      open = await gateway({ ...target(), GRAPHQL_INTROSPECTION: 'public' });
    });
    afterAll(async () => {
      await quiet?.close();
      await open?.close();
    });

    const INTROSPECTIONS = ['{ __schema { types { name } } }', '{ __type(name: "Product") { name } }'];
    const TYPO = '{ prodcts { nextPageToken } }';

    it('GRAPHQL_INTROSPECTION=authenticated (the default): a token may introspect, an anonymous caller is refused as with off and gets no name suggestions', async () => {
      for (const query of INTROSPECTIONS) {
        // The same text in both orders: validation is cached by text, the decision is per caller.
        for (const who of [undefined, 'alice', undefined, 'alice'] as const) {
          const r = await gql(query, { who });
          const refusal = { status: 400, codes: ['BAD_USER_INPUT'], message: expect.stringMatching(/^GraphQL introspection has been disabled/) };
          const seen = { query, who, status: r.status, codes: [...new Set(r.codes)], message: r.errors?.[0]?.message };
          expect(seen).toEqual({ query, who, ...(who ? { status: 200, codes: [], message: undefined } : refusal) });
        }
      }
      expect((await gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
      expect((await gql(TYPO)).errors![0]!.message).not.toMatch(/Did you mean/);
      expect((await gql(TYPO, { who: 'alice' })).errors![0]!.message).toMatch(/Did you mean "products"/);
      // Variables coerced against the schema suggest nothing either.
      const enumTypo = await gql('query($s: ProductStatus) { products(status: $s) { nextPageToken } }', { variables: { s: 'ACTIV' } });
      expect(enumTypo.errors![0]!.message).not.toMatch(/Did you mean/);
    });

    it('GRAPHQL_INTROSPECTION=off refuses __schema and __type to everyone (not __typename) and suggests no field names', async () => {
      for (const query of INTROSPECTIONS) {
        for (const who of [undefined, 'alice', 'admin'] as const) {
          const r = await gql(query, { who, g: quiet });
          expect({ query, who, status: r.status, codes: [...new Set(r.codes)] }).toEqual({ query, who, status: 400, codes: ['BAD_USER_INPUT'] });
        }
      }
      expect((await gql('{ __typename }', { g: quiet })).data).toEqual({ __typename: 'Query' });
      for (const who of [undefined, 'alice'] as const) expect((await gql(TYPO, { who, g: quiet })).errors![0]!.message).not.toMatch(/Did you mean/);
    });

    it('GRAPHQL_INTROSPECTION=public lets anonymous callers introspect, with name suggestions', async () => {
      for (const query of INTROSPECTIONS) expect((await gql(query, { g: open })).errors).toBeUndefined();
      expect((await gql(getIntrospectionQuery(), { g: open })).data.__schema.queryType).toMatchObject({ name: 'Query' });
      expect((await gql(TYPO, { g: open })).errors![0]!.message).toMatch(/Did you mean "products"/);
    });

    it('GRAPHQL_IDE=true serves GraphiQL', async () => {
      const res = await quiet.app.inject({ url: '/graphiql' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    });

    const checkoutOf = (productId: string) => (g: Gateway, who: Who, from: string, field = 'checkout') =>
      gql(`mutation { ${field}(input: {idempotencyKey: "${randomUUID()}", lines: [{productId: "${productId}", quantity: 1}]}) { id } }`, { who, g, from });

    it('checkouts are limited per token subject (429 problem+json with Retry-After), with a ceiling per address; other operations are not', async () => {
      const checkout = checkoutOf((await newProduct({ onHand: 100 })).id);
      const statuses = async (who: Who, from: string, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await checkout(quiet, who, from, i % 2 ? 'createOrder' : 'checkout')).status);
        return out;
      };
      // Two shoppers behind one address each have their own budget.
      expect(await statuses('alice', '192.0.2.1', 3)).toEqual([200, 200, 429]);
      expect(await statuses('bob', '192.0.2.1', 3)).toEqual([200, 200, 429]);
      // One shopper from two addresses has one budget.
      expect([...(await statuses('carol', '192.0.2.2', 1)), ...(await statuses('carol', '192.0.2.3', 2))]).toEqual([200, 200, 429]);
      // The address's ceiling: five checkouts from 192.0.2.1 whoever places them (refused ones did not count).
      expect([...(await statuses('dave', '192.0.2.1', 1)), ...(await statuses('erin', '192.0.2.1', 1))]).toEqual([200, 429]);
      // Elsewhere Erin has a checkout left (her refused one counted for her, not for 192.0.2.1).
      expect((await checkout(quiet, 'erin', '192.0.2.4')).status).toBe(200);
      const refused = await quiet.app.inject({
        method: 'POST',
        url: '/api/v1/graphql',
        remoteAddress: '192.0.2.1',
        headers: { authorization: 'Bearer erin', 'content-type': 'application/json' },
        payload: JSON.stringify({ query: 'mutation { checkout(input: {idempotencyKey: "r"}) { id } }' }),
      });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await gql('{ cart { currency } }', { who: 'alice', g: quiet, from: '192.0.2.1' })).status).toBe(200);
    });

    it('with REDIS_URL, every replica shares one checkout budget per subject', async () => {
      const env = { ...target(), ...limits, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `iam-test:${randomUUID()}:` };
      const [a, b] = [await gateway(env), await gateway(env)];
      try {
        const checkout = checkoutOf((await newProduct({ onHand: 100 })).id);
        const statuses = [await checkout(a, 'alice', '198.51.100.1'), await checkout(b, 'alice', '198.51.100.2'), await checkout(a, 'alice', '198.51.100.3')].map((r) => r.status);
        expect(statuses).toEqual([200, 200, 429]);
        expect((await checkout(b, 'bob', '198.51.100.1')).status).toBe(200);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('commerce unreachable', () => {
    let down: Gateway;
    beforeAll(async () => {
      down = await gateway({ COMMERCE_GRPC_TARGET: '127.0.0.1:1', UPSTREAM_TIMEOUT_MS: '500' }, [], { commerceUp: false });
    });
    afterAll(async () => {
      await down?.close();
    });

    it('/healthz → 503 {status: unavailable}; readiness 503; REST 503 problem; GraphQL UPSTREAM_UNAVAILABLE (HTTP 200)', async () => {
      const h = await http('GET', '/healthz', { g: down });
      expect(h.statusCode).toBe(503);
      expect(h.json()).toEqual({ status: 'unavailable' });
      const ready = await http('GET', '/health/ready', { g: down });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.commerce).toBe('down');
      const rest = await http('GET', '/api/v1/products', { g: down });
      expect(rest.statusCode).toBe(503);
      expect(rest.headers['content-type']).toMatch(/^application\/problem\+json/);
      const r = await gql('{ products { nextPageToken } }', { g: down });
      expect(r).toMatchObject({ status: 200, data: null, codes: ['UPSTREAM_UNAVAILABLE'] });
      expect(r.errors![0]!.message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    });
  });
});
