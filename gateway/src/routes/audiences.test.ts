/**
 * Authentication by construction: every route the Full and Compact profiles register is walked
 * without credentials; exactly the anonymous list (spec §5 point 2, plus the JWKS, the docs and
 * the emailed-token confirmations) answers anything but 401.
 */
import { AppError, HealthMonitor, readConfig } from '@iam/platform/core';
import { testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
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
  'POST /api/v1/auth/password-reset/request',
  'POST /api/v1/auth/password-reset/confirm',
  'POST /api/v1/auth/email-verification/confirm',
  'GET /.well-known/jwks.json',
  'GET /docs',
  'GET /docs/full/openapi.json',
  'GET /docs/compact/openapi.json',
  // Swagger UI (@fastify/swagger-ui): its page, assets (a wildcard route, not listed) and the combined document.
  'GET /docs/json',
  'GET /docs/yaml',
  'GET /docs/static/index.html',
  'GET /docs/static/swagger-initializer.js',
].sort();

describe('routes by audience', () => {
  let app: FastifyInstance;
  const calls: string[] = [];

  beforeAll(async () => {
    const config = readConfig({ GATEWAY_PROFILES: 'full,compact' }, readGatewayConfig);
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
    const routes = app.knownRoutes().filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
    expect(routes.length).toBeGreaterThanOrEqual(40);
    for (const r of routes) {
      const url = r.url.replace(':id', '7c2b5d1e-0000-4000-8000-000000000001').replace(':file', 'swagger-ui.css');
      calls.length = 0;
      const res = await app.inject({ method: r.method as 'GET', url, payload: r.method === 'GET' || r.method === 'DELETE' ? undefined : {} });
      if (res.statusCode === 401) {
        expect({ route: `${r.method} ${r.url}`, calls }).toEqual({ route: `${r.method} ${r.url}`, calls: [] });
        expect(res.headers['www-authenticate']).toBe('Bearer');
        expect(res.headers['cache-control']).toBe('no-store');
      } else {
        anonymous.push(`${r.method} ${r.url}`);
      }
    }
    expect(anonymous.sort()).toEqual(ANONYMOUS);
  });

  it('the documents show the bearer scheme and the 401/403 problems on exactly the protected operations', async () => {
    for (const profile of ['full', 'compact']) {
      const doc = (await app.inject({ url: `/docs/${profile}/openapi.json` })).json<{ paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>> }>();
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const anonymous = ANONYMOUS.includes(`${method.toUpperCase()} ${path.replace('{id}', ':id')}`);
          expect({ op: `${method} ${path}`, secured: op.security !== undefined }).toEqual({ op: `${method} ${path}`, secured: !anonymous });
          if (!anonymous) expect(op.responses).toHaveProperty('401');
          if (path.startsWith('/api/v1/') && !path.startsWith('/api/v1/auth') && !anonymous) expect(op.responses).toHaveProperty('403');
        }
      }
    }
  });
});
