/**
 * The edge profile's settings through app.inject (commerce faked at the gRPC level): GraphQL
 * introspection off, authenticated or public, the bundled GraphiQL, and the checkout limits per
 * subject and address, shared through Redis. The rest of the edge profile: edge.test.ts.
 */
import { getIntrospectionQuery } from 'graphql';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Gateway, type Who, edgeCallers, fakeCommerce, gateway } from '../../testing/edge-gateway';

describe('edge profile settings (commerce faked at the gRPC level)', () => {
  let commerce: Awaited<ReturnType<typeof fakeCommerce>>;
  /** The defaults (introspection for authenticated callers), checkouts unlimited. */
  let gw: Gateway;
  let quiet: Gateway;
  let open: Gateway;
  const { gql } = edgeCallers(() => gw);

  beforeAll(async () => {
    commerce = await fakeCommerce();
    gw = await gateway({ COMMERCE_GRPC_TARGET: commerce.target, RATE_LIMIT_CHECKOUT_BURST: '1000', RATE_LIMIT_CHECKOUT_PER_MINUTE: '100000' });
  });
  afterAll(async () => {
    await gw?.close();
    await commerce?.close();
  });

  const target = () => ({ COMMERCE_GRPC_TARGET: commerce.target });
  // Two checkouts per subject in a window, five per address.
  const limits = { RATE_LIMIT_CHECKOUT_BURST: '2', RATE_LIMIT_CHECKOUT_PER_MINUTE: '2', RATE_LIMIT_CHECKOUT_ADDRESS_BURST: '5', RATE_LIMIT_CHECKOUT_ADDRESS_PER_MINUTE: '5' };
  beforeAll(async () => {
    // A built console holding GraphiQL's page (whether or not console/dist exists in this tree).
    const built = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(built, 'assets'));
    writeFileSync(join(built, 'graphiql.html'), '<!doctype html><title>GraphiQL</title>');
    quiet = await gateway({ ...target(), GRAPHQL_INTROSPECTION: 'off', GRAPHQL_IDE: 'true', CONSOLE_DIR: built, ...limits });
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

  it('GRAPHQL_IDE=true serves the bundled GraphiQL with the edge profile alone (no console), under its own CSP', async () => {
    const res = await quiet.app.inject({ url: '/graphiql' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    // Not mercurius's page, which loads React and GraphiQL from a CDN.
    expect((await quiet.app.inject({ url: '/graphiql/main.js' })).statusCode).toBe(404);
    expect((await quiet.app.inject({ url: '/console' })).statusCode).toBe(404);
  });

  const checkoutOf = (productId: string) => (g: Gateway, who: Who, from: string, field = 'checkout') =>
    gql(`mutation { ${field}(input: {idempotencyKey: "${randomUUID()}", lines: [{productId: "${productId}", quantity: 1}]}) { id } }`, { who, g, from });

  it('checkouts are limited per token subject (429 problem+json with Retry-After), with a ceiling per address; other operations are not', async () => {
    const checkout = checkoutOf(randomUUID());
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
      const checkout = checkoutOf(randomUUID());
      const statuses = [await checkout(a, 'alice', '198.51.100.1'), await checkout(b, 'alice', '198.51.100.2'), await checkout(a, 'alice', '198.51.100.3')].map((r) => r.status);
      expect(statuses).toEqual([200, 200, 429]);
      expect((await checkout(b, 'bob', '198.51.100.1')).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
