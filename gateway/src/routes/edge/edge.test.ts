/**
 * The edge profile through app.inject, with commerce faked at the gRPC level (a checkout places a
 * canned order, the order list is empty: the gateway's own decisions need no catalog): /healthz
 * and readiness, the REST query limits, and /api/v1/graphql (auth before any call, document
 * limits, transport errors as problem+json; introspection and the checkout limits per setting,
 * the limits shared through Redis), and commerce unreachable. Every response is checked against
 * the edge OpenAPI document. Tokens come from a fake authenticator. What needs the real commerce
 * service (the catalog, carts, checkouts and their refusals, one batch call per response) is
 * deploy/all-in-one/test/edge-commerce.e2e.test.ts.
 */
import { commerceV1 } from '@iam/contracts';
import { type AccessClaims, AppError, HealthMonitor, readConfig } from '@iam/platform';
import { GrpcHealth, bindService, startGrpcServer } from '@iam/platform/grpc';
import { TEST_CALL_KEY, eventually, testBus, testLogger, testMetrics, testSigner } from '@iam/platform/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../app';
import type { Authenticator } from '../../auth/authenticator';
import { Denylist } from '../../auth/denylist';
import { readGatewayConfig } from '../../config';
import { ResponseChecker } from '../../docs/response-check';
import { type Upstreams, createUpstreams } from '../../upstreams';

const logger = testLogger();

function claims(over: Partial<AccessClaims> = {}): AccessClaims {
  const now = Math.floor(Date.now() / 1000);
  const sub = over.sub ?? randomUUID();
  return { sub, jti: randomUUID(), iss: 'iam', aud: ['iam-api'], iat: now, nbf: now, exp: now + 300, email: `${sub}@example.com`, roles: [], permissions: [], ...over };
}

const TOKENS = {
  alice: claims(),
  bob: claims(),
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

/**
 * Commerce at the gRPC level: serving (and its database), a checkout places a canned order, the
 * order list is empty; every other method answers UNIMPLEMENTED.
 */
async function fakeCommerce(): Promise<{ target: string; close(): Promise<void> }> {
  const health = new GrpcHealth();
  const monitor = new HealthMonitor({ checks: { db: async () => undefined, bus: async () => undefined }, logger });
  health.follow(monitor);
  await monitor.refresh();
  const deps = { logger, metrics: testMetrics(), service: 'commerce', callKey: TEST_CALL_KEY };
  const order = (customerId: string): commerceV1.Order => {
    const [id, now] = [randomUUID(), new Date()];
    return { id, customerId, status: commerceV1.OrderStatus.ORDER_STATUS_CONFIRMED, lines: [], totalMinor: 0, currency: 'EUR', createdAt: now, updatedAt: now };
  };
  const orders = bindService(
    commerceV1.OrderServiceService,
    { checkout: async (r) => ({ order: order(r.customerId), replayed: false }), listOrders: async () => ({ orders: [], nextPageToken: '' }) },
    deps,
    // As the real one: the gateway's asserted calls only.
    ['gateway'],
  );
  const server = await startGrpcServer({ host: '127.0.0.1', port: 0, logger, health, bindings: [orders] });
  return { target: `127.0.0.1:${server.port}`, close: () => server.shutdown(1_000) };
}

interface Gateway {
  app: FastifyInstance;
  upstreams: Upstreams;
  checker: ResponseChecker;
  close(): Promise<void>;
}

async function gateway(env: Record<string, string>, opts = { commerceUp: true }): Promise<Gateway> {
  const config = readConfig({ GATEWAY_PROFILES: 'edge', MAX_EVENT_LOOP_DELAY_MS: '0', ...env }, readGatewayConfig);
  const metrics = testMetrics();
  const bus = testBus({ logger });
  const upstreams = createUpstreams(config, { metrics, bus, signer: testSigner('gateway') });
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

describe('edge profile (commerce faked at the gRPC level)', () => {
  let commerce: Awaited<ReturnType<typeof fakeCommerce>>;
  let gw: Gateway;

  beforeAll(async () => {
    commerce = await fakeCommerce();
    gw = await gateway({ COMMERCE_GRPC_TARGET: commerce.target, RATE_LIMIT_CHECKOUT_BURST: '1000', RATE_LIMIT_CHECKOUT_PER_MINUTE: '100000' });
  });

  afterAll(async () => {
    await gw?.close();
    await commerce?.close();
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

  describe('REST', () => {
    it('GET /healthz → 200 {status: ok} while commerce serves; readiness counts commerce', async () => {
      const res = await http('GET', '/healthz');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
      const ready = await http('GET', '/health/ready');
      expect(ready.json().checks).toMatchObject({ commerce: 'up', 'commerce.db': 'up' });
    });

    it('edge-only mode signs shoppers in through the OpenID provider: discovery and /oidc are proxied to it (mounted: not 404)', async () => {
      // The provider documents itself (discovery), not the gateway's OpenAPI: asked without the document check.
      for (const path of ['/.well-known/openid-configuration', '/oidc/auth?client_id=x']) {
        const res = await gw.app.inject({ method: 'GET', url: path });
        expect([path, res.statusCode]).not.toEqual([path, 404]);
      }
      expect((await http('GET', '/api/v1/users')).statusCode).toBe(404);
    });

    it('bad parameters → 400 problem+json naming the query field, before commerce is asked', async () => {
      const bad: Array<[string, string]> = [
        ['page_size=0', 'querystring.page_size'],
        ['page_size=101', 'querystring.page_size'],
        ['page_size=abc', 'querystring.page_size'],
        ['status=deleted', 'querystring.status'],
        [`q=${'x'.repeat(201)}`, 'querystring.q'],
        [`page_token=${'A'.repeat(201)}`, 'querystring.page_token'],
      ];
      for (const [qs, field] of bad) {
        const res = await http('GET', `/api/v1/products?${qs}`);
        expect({ qs, status: res.statusCode, type: res.headers['content-type'] }).toEqual({ qs, status: 400, type: 'application/problem+json' });
        expect(res.json().errors?.[0]?.field).toBe(field);
      }
      expect((await http('GET', '/api/v1/products/nope')).statusCode).toBe(400);
    });
  });

  describe('GraphQL', () => {
    const CART = '{ cart { customerId subtotalMinor currency lines { productId quantity product { id name priceMinor available } } } }';

    it('{ __typename } is public; a product id that is not a UUID is BAD_USER_INPUT', async () => {
      const r = await gql('{ __typename }');
      expect(r).toMatchObject({ status: 200, data: { __typename: 'Query' }, errors: undefined });
      expect(r.headers['cache-control']).toBeUndefined();
      expect((await gql('{ product(id: "nope") { name } }')).codes).toEqual(['BAD_USER_INPUT']);
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
      // HEAD is not a way around it (Fastify answers HEAD with the GET route).
      const head = await gw.app.inject({ method: 'HEAD', url: `/api/v1/graphql?query=${encodeURIComponent('mutation { clearCart { currency } }')}`, headers: { authorization: 'Bearer alice' } });
      expect(head.statusCode).toBe(405);
    });

    it('a query that is JSON but no document is 400, and so is a GET whose operation name names none of its operations; never a 500', async () => {
      const q = (query: string, operationName?: string) => `/api/v1/graphql?${new URLSearchParams({ query, ...(operationName ? { operationName } : {}) }).toString()}`;
      const answers = [
        await http('POST', '/api/v1/graphql', { payload: { query: 'null' } }),
        await http('POST', '/api/v1/graphql', { payload: { query: '42' } }),
        await http('POST', '/api/v1/graphql', { payload: { query: '"text"' } }),
        await http('GET', q('null')),
        await http('GET', q('[]')),
        await http('GET', q('query A { __typename }', 'B')),
        await http('GET', q('query A { __typename } query B { __typename }')),
      ];
      expect(answers.map((r) => r.statusCode)).toEqual(answers.map(() => 400));
      // A POST runs as far as picking its operation, which fails as a request error (nothing executed): 200 as GraphQL answers it.
      for (const payload of [{ query: 'query A { __typename }', operationName: 'B' }, { query: 'query A { __typename } query B { __typename }' }]) {
        const res = await http('POST', '/api/v1/graphql', { payload });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ data: null, errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
      }
      const named = await http('GET', q('query A { __typename } query B { __typename }', 'B'));
      expect(named.json()).toEqual({ data: { __typename: 'Query' } });
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
    const target = () => ({ COMMERCE_GRPC_TARGET: commerce.target });
    // Two checkouts per subject in a window, five per address.
    const limits = { RATE_LIMIT_CHECKOUT_BURST: '2', RATE_LIMIT_CHECKOUT_PER_MINUTE: '2', RATE_LIMIT_CHECKOUT_ADDRESS_BURST: '5', RATE_LIMIT_CHECKOUT_ADDRESS_PER_MINUTE: '5' };
    let quiet: Gateway;
    let open: Gateway;
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

  describe('commerce unreachable', () => {
    let down: Gateway;
    beforeAll(async () => {
      down = await gateway({ COMMERCE_GRPC_TARGET: '127.0.0.1:1', UPSTREAM_TIMEOUT_MS: '500' }, { commerceUp: false });
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
