/**
 * Authentication by construction: every route the Full and Compact profiles register is walked
 * without credentials; exactly the anonymous list (spec §5 point 2, plus the JWKS, the docs and
 * the emailed-token confirmations) answers anything but 401.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, HealthMonitor, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import { OAUTH_DISCOVERY, OIDC_DISCOVERY, OIDC_PREFIX } from './oidc';
import { SCIM_PREFIX } from './scim';
import type { Upstreams } from '../upstreams';

const ANONYMOUS = [
  'GET /health',
  'GET /health/live',
  'GET /health/ready',
  'GET /api/v1/health',
  'GET /metrics',
  'POST /api/v1/auth/generate-jwt',
  'POST /api/v1/generate-jwt',
  'POST /api/v1/auth/refresh',
  'POST /api/v1/auth/organization-token',
  'POST /api/v1/auth/password-reset/request',
  'POST /api/v1/auth/password-reset/confirm',
  'POST /api/v1/auth/email-verification/confirm',
  // A login's second step (its mfa token proves the password): DESIGN §5.
  'POST /api/v1/auth/mfa',
  'POST /api/v1/auth/mfa/enrol',
  'POST /api/v1/auth/mfa/passkey/options',
  'POST /api/v1/auth/mfa/webauthn/options',
  'POST /api/v1/auth/passkey',
  'POST /api/v1/auth/passkey/options',
  'GET /.well-known/jwks.json',
  // The API's protected-resource metadata (RFC 9728), at the root and at the path of its resource.
  'GET /.well-known/oauth-protected-resource',
  'GET /.well-known/oauth-protected-resource/api',
  'GET /docs',
  'GET /docs/full/openapi.json',
  'GET /docs/compact/openapi.json',
  // Swagger UI (@fastify/swagger-ui): its page, assets (a wildcard route, not listed) and the combined document.
  'GET /docs/json',
  'GET /docs/yaml',
  'GET /docs/static/index.html',
  'GET /docs/static/swagger-initializer.js',
  // The admin console (routes/console.ts): static files; its wildcards (/console/*, /console/assets/*)
  // are not listed, like the docs' assets (routes/console.test.ts checks them).
  'GET /console',
  // The hosted email-action pages (routes/console.ts): static pages; their token is posted by the page.
  'GET /reset-password',
  'GET /verify-email',
].sort();

describe('routes by audience', () => {
  let app: FastifyInstance;
  const calls: string[] = [];

  beforeAll(async () => {
    // A built console (whether or not console/dist exists in this tree).
    const consoleDir = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(consoleDir, 'assets'));
    writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>console</title>');
    for (const page of ['reset-password', 'verify-email']) writeFileSync(join(consoleDir, `${page}.html`), `<!doctype html><title>${page}</title>`);
    const config = readConfig({ GATEWAY_PROFILES: 'full,compact', CONSOLE_DIR: consoleDir, ...NO_SHEDDING }, readGatewayConfig);
    // Any upstream call fails: an anonymous route answers 503, never 401.
    const upstreams = new Proxy({} as Upstreams, {
      get: (_t, service: string) =>
        new Proxy({}, { get: (_s, method: string) => async () => (calls.push(`${service}.${method}`), Promise.reject(AppError.unavailable())) }),
    });
    const authenticator: Authenticator = { verify: async () => Promise.reject(AppError.unauthenticated()) };
    const health = new HealthMonitor({ logger: testLogger(), checks: {} });
    app = await buildApp({ config, logger: testLogger(), metrics: testMetrics(), health, upstreams, authenticator, denylist: new Denylist() });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
  });

  it('every route outside the anonymous list answers 401 without a token, before any upstream call', async () => {
    const anonymous: string[] = [];
    // The OpenID provider's paths (routes/oidc.ts) are proxied as they are: the provider itself
    // authenticates its clients and users (OAuth), never with the API's bearer tokens.
    // SCIM (routes/scim.ts) authenticates its own clients with SCIM connection tokens: no token is
    // its own 401 (SCIM's error schema), before any upstream call, tested in scim.test.ts.
    const scim = (url: string) => url.startsWith(`${SCIM_PREFIX}/`);
    const proxied = (url: string) => url === OIDC_DISCOVERY || url === OAUTH_DISCOVERY || url.startsWith(`${OIDC_PREFIX}`) || url.startsWith(`${OIDC_DISCOVERY}/`) || url.startsWith(`${OAUTH_DISCOVERY}/`);
    expect(app.knownRoutes().filter((r) => r.method === 'GET' && proxied(r.url)).map((r) => r.url).sort()).toEqual(
      [OIDC_DISCOVERY, OAUTH_DISCOVERY, OIDC_PREFIX, `${OIDC_PREFIX}/auth`, `${OIDC_PREFIX}/device`, `${OIDC_PREFIX}/federation`, `${OIDC_PREFIX}/interaction`, `${OIDC_PREFIX}/par`, `${OIDC_PREFIX}/token`].sort(),
    );
    const routes = app.knownRoutes().filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !proxied(r.url) && !scim(r.url));
    expect(routes.length).toBeGreaterThanOrEqual(40);
    for (const r of routes) {
      const url = r.url.replace(':id', '7c2b5d1e-0000-4000-8000-000000000001').replace(':file', 'swagger-ui.css');
      calls.length = 0;
      const res = await app.inject({ method: r.method as 'GET', url, payload: r.method === 'GET' || r.method === 'DELETE' ? undefined : {} });
      if (res.statusCode === 401) {
        expect({ route: `${r.method} ${r.url}`, calls }).toEqual({ route: `${r.method} ${r.url}`, calls: [] });
        // RFC 9728 §5.1: every 401 names the API's protected-resource metadata.
        expect(res.headers['www-authenticate']).toBe('Bearer resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource/api"');
        expect(res.headers['cache-control']).toBe('no-store');
      } else {
        anonymous.push(`${r.method} ${r.url}`);
      }
    }
    expect(anonymous.sort()).toEqual(ANONYMOUS);
  });

  it('the documents show the bearer scheme and the 401/403 problems on exactly the protected operations', async () => {
    for (const profile of ['full', 'compact']) {
      const doc = (await app.inject({ url: `/docs/${profile}/openapi.json` })).json<{ paths: Record<string, Record<string, { security?: Array<Record<string, unknown>>; responses: Record<string, unknown> }>> }>();
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const anonymous = ANONYMOUS.includes(`${method.toUpperCase()} ${path.replace('{id}', ':id')}`);
          // An empty requirement makes the scheme optional (a password reset names a signed-in caller, needs none).
          const secured = op.security !== undefined && !op.security.some((r) => Object.keys(r).length === 0);
          expect({ op: `${method} ${path}`, secured }).toEqual({ op: `${method} ${path}`, secured: !anonymous });
          if (!anonymous) expect(op.responses).toHaveProperty('401');
          // The caller's own (/api/v1/me, /api/v1/me/...) needs no permission: no 403 unless the route names one (reauthentication).
          const own = path === '/api/v1/me' || path.startsWith('/api/v1/me/');
          if (path.startsWith('/api/v1/') && !path.startsWith('/api/v1/auth') && !own && !anonymous) expect(op.responses).toHaveProperty('403');
        }
      }
    }
  });
});

describe('routes by audience: the edge profile', () => {
  // Public: the catalog and /healthz. GraphQL takes an optional token and decides per field.
  const EDGE_ANONYMOUS = [
    'GET /health',
    'GET /health/live',
    'GET /health/ready',
    'GET /api/v1/health',
    'GET /metrics',
    'GET /healthz',
    'GET /api/v1/products',
    'GET /api/v1/products/:id',
    'GET /api/v1/graphql',
    'POST /api/v1/graphql',
    'GET /docs',
    'GET /docs/edge/openapi.json',
    'GET /docs/json',
    'GET /docs/yaml',
    'GET /docs/static/index.html',
    'GET /docs/static/swagger-initializer.js',
    'GET /.well-known/oauth-protected-resource',
    'GET /.well-known/oauth-protected-resource/api',
  ].sort();
  let app: FastifyInstance;
  const calls: string[] = [];

  beforeAll(async () => {
    const config = readConfig({ GATEWAY_PROFILES: 'edge', ...NO_SHEDDING }, readGatewayConfig);
    // Any upstream call fails (and is recorded): an anonymous route answers 503, never 401. The
    // batch call fails as a bug would, with an internal message.
    const failing = (path: string[]): unknown =>
      new Proxy(() => undefined, {
        get: (_t, key: string) => failing([...path, key]),
        apply: () => {
          calls.push(path.join('.'));
          return Promise.reject(path.at(-1) === 'batchGetProducts' ? new Error('secret detail at /srv/app.js:12') : AppError.unavailable());
        },
      });
    const upstreams = failing([]) as Upstreams;
    const authenticator: Authenticator = { verify: async () => Promise.reject(AppError.unauthenticated()) };
    const health = new HealthMonitor({ logger: testLogger(), checks: {} });
    app = await buildApp({ config, logger: testLogger(), metrics: testMetrics(), health, upstreams, authenticator, denylist: new Denylist() });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
  });

  it('every edge route is public; a present but invalid token on GraphQL is 401 before any upstream call', async () => {
    // SCIM (routes/scim.ts) authenticates its own clients with SCIM connection tokens: no token is
    // its own 401 (SCIM's error schema), before any upstream call, tested in scim.test.ts.
    const scim = (url: string) => url.startsWith(`${SCIM_PREFIX}/`);
    const proxied = (url: string) => url === OIDC_DISCOVERY || url === OAUTH_DISCOVERY || url.startsWith(OIDC_PREFIX);
    const routes = app.knownRoutes().filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !proxied(r.url) && !scim(r.url));
    const anonymous: string[] = [];
    for (const r of routes) {
      const url = r.url.replace(':id', '7c2b5d1e-0000-4000-8000-000000000001').replace(':file', 'swagger-ui.css');
      const res = await app.inject({ method: r.method as 'GET', url, payload: r.method === 'POST' ? { query: '{ __typename }' } : undefined });
      if (res.statusCode !== 401) anonymous.push(`${r.method} ${r.url}`);
    }
    expect(anonymous.sort()).toEqual(EDGE_ANONYMOUS);

    calls.length = 0;
    const forged = await app.inject({ method: 'POST', url: '/api/v1/graphql', headers: { authorization: 'Bearer forged' }, payload: { query: '{ products { nextPageToken } }' } });
    expect(forged.statusCode).toBe(401);
    expect(forged.headers['www-authenticate']).toBe('Bearer error="invalid_token", resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource/api"');
    expect(forged.headers['cache-control']).toBe('no-store');
    expect(calls).toEqual([]);
  });

  it('protected GraphQL fields answer UNAUTHENTICATED without a token, before any upstream call', async () => {
    calls.length = 0;
    const res = await app.inject({ method: 'POST', url: '/api/v1/graphql', payload: { query: 'mutation { checkout(input: {idempotencyKey: "k"}) { id } }' } });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ errors: Array<{ extensions: { code: string } }> }>().errors.map((e) => e.extensions.code)).toEqual(['UNAUTHENTICATED']);
    expect(calls).toEqual([]);
  });

  it('an unavailable upstream is UPSTREAM_UNAVAILABLE; an unexpected fault INTERNAL_SERVER_ERROR without its message', async () => {
    const down = await app.inject({ method: 'POST', url: '/api/v1/graphql', payload: { query: '{ products { products { id } } }' } });
    expect(down.statusCode).toBe(200);
    expect(down.json()).toEqual({
      data: null,
      errors: [{ message: 'The commerce service is unavailable; try again shortly.', path: ['products'], locations: [{ line: 1, column: 3 }], extensions: { code: 'UPSTREAM_UNAVAILABLE' } }],
    });
    const bug = await app.inject({ method: 'POST', url: '/api/v1/graphql', payload: { query: '{ product(id: "7c2b5d1e-0000-4000-8000-000000000001") { id } }' } });
    expect(bug.statusCode).toBe(200);
    expect(bug.json()).toEqual({
      data: { product: null },
      errors: [{ message: 'An unexpected error occurred.', path: ['product'], locations: [{ line: 1, column: 3 }], extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    });
    expect(bug.body).not.toMatch(/secret|srv|app\.js/);
  });
});
