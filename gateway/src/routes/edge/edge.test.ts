/**
 * The edge profile through app.inject, with commerce faked at the gRPC level (a checkout places a
 * canned order, the order list is empty: the gateway's own decisions need no catalog): /healthz
 * and readiness, the REST query limits, and /api/v1/graphql (auth before any call, document
 * limits, transport errors as problem+json), and commerce unreachable. Every response is checked
 * against the edge OpenAPI document. Tokens come from a fake authenticator (the harness:
 * src/testing/edge-gateway.ts). Introspection and the checkout limits per setting, the limits
 * shared through Redis: edge-config.test.ts. What needs the real commerce
 * service (the catalog, carts, checkouts and their refusals, one batch call per response) is
 * deploy/all-in-one/test/edge-commerce.e2e.test.ts.
 */
import { testLogger } from '@iam/platform/testing';
import type { LightMyRequestResponse } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import { randomUUID } from 'node:crypto';
import { type Gateway, edgeCallers, fakeCommerce, gateway } from '../../testing/edge-gateway';

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
  const { http, gql } = edgeCallers(() => gw);
  const logger = testLogger();

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
