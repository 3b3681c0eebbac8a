/**
 * The third-party plugins as the gateway configures them: CORS by allow-list, rate limits shared
 * through the real Redis (127.0.0.1:6379) and failing open without it, load shedding, 431.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { HealthMonitor, readConfig } from '@iam/platform/core';
import { testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app';
import { readGatewayConfig } from '../../config';
import { limitOf } from './rate-limit';

const health = new HealthMonitor({ logger: testLogger(), checks: {} });

async function gateway(env: Record<string, string>, routes?: (app: FastifyInstance) => void) {
  const metrics = testMetrics();
  const app = await buildApp({ config: readConfig({ GATEWAY_PROFILES: '', ...env }, readGatewayConfig), logger: testLogger(), metrics, health });
  app.get('/test/limited', { config: { rateLimit: limitOf('test', { perMinute: 60, burst: 3 }) } }, async () => ({ ok: true }));
  app.get('/test/limited-too', { config: { rateLimit: limitOf('test', { perMinute: 60, burst: 3 }) } }, async () => ({ ok: true }));
  routes?.(app);
  await app.ready();
  return { app, metrics };
}

describe('CORS', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    ({ app } = await gateway({ CORS_ORIGINS: 'https://app.example, http://localhost:5173' }));
  });
  afterAll(() => app.close());

  it('an allowed origin gets the CORS headers, exposing X-Trace-Id, Location, Retry-After and WWW-Authenticate (DPoP refusals), without credentials', async () => {
    const res = await app.inject({ url: '/health', headers: { origin: 'https://app.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/).sort()).toEqual(['location', 'retry-after', 'www-authenticate', 'x-trace-id']);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/origin/i);
  });

  it('a preflight from an allowed origin names the methods and the headers a client sends', async () => {
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/api/v1/users',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization,content-type,dpop,idempotency-key' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(String(res.headers['access-control-allow-methods'])).toEqual(expect.stringContaining('PUT'));
    expect(String(res.headers['access-control-allow-methods'])).toEqual(expect.stringContaining('DELETE'));
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['authorization', 'content-type', 'dpop', 'idempotency-key']) expect(allowed).toContain(h);
  });

  it('another origin gets no CORS headers at all', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.evil', 'null']) {
      const res = await app.inject({ url: '/health', headers: { origin } });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await app.inject({ method: 'OPTIONS', url: '/health', headers: { origin, 'access-control-request-method': 'GET' } });
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('a bad CORS_ORIGINS stops the start with a message naming it', () => {
    expect(() => readConfig({ CORS_ORIGINS: 'https://app.example/path' }, readGatewayConfig)).toThrow(/CORS_ORIGINS/);
    expect(() => readConfig({ CORS_ORIGINS: '*' }, readGatewayConfig)).toThrow(/CORS_ORIGINS/);
  });
});

describe('rate limits', () => {
  const expect429 = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(res.body)).toMatchObject({ status: 429, traceId: expect.any(String) });
  };

  it('two gateways sharing Redis share one budget per client', async () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `iam-test:${randomBytes(6).toString('hex')}:` };
    const a = await gateway(env);
    const b = await gateway(env);
    try {
      const statuses = [];
      for (const g of [a, b, a]) statuses.push((await g.app.inject({ url: '/test/limited' })).statusCode);
      expect(statuses).toEqual([200, 200, 200]);
      expect429(await b.app.inject({ url: '/test/limited' }));
      expect429(await a.app.inject({ url: '/test/limited-too' }));
    } finally {
      await a.app.close();
      await b.app.close();
    }
  });

  it('in one process, routes of one name share a budget too', async () => {
    const { app } = await gateway({});
    try {
      for (let i = 0; i < 3; i++) expect((await app.inject({ url: i % 2 ? '/test/limited' : '/test/limited-too' })).statusCode).toBe(200);
      expect429(await app.inject({ url: '/test/limited' }));
    } finally {
      await app.close();
    }
  });

  it('Redis down: limits fail open, never a 5xx, and a metric counts it', async () => {
    const { app, metrics } = await gateway({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      for (let i = 0; i < 6; i++) expect((await app.inject({ url: '/test/limited' })).statusCode).toBe(200);
      expect((await metrics.rateLimitStoreErrors.get()).values[0]?.value).toBe(6);
    } finally {
      await app.close();
    }
  });
});

describe('load shedding and HTTP limits', () => {
  it('a saturated event loop → 503 problem+json with Retry-After, then normal again', async () => {
    // Shedding follows the mean delay over a second: 1.3 s of 50 ms stalls.
    const { app } = await gateway({ MAX_EVENT_LOOP_DELAY_MS: '20' }, (a) =>
      a.get('/test/stall', async () => {
        for (let i = 0; i < 26; i++) {
          const until = Date.now() + 50;
          while (Date.now() < until);
          await new Promise((r) => setImmediate(r));
        }
        return { ok: true };
      }),
    );
    try {
      await app.inject({ url: '/test/stall' });
      const res = await app.inject({ url: '/health' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      await new Promise((r) => setTimeout(r, 2_200));
      expect((await app.inject({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('headers too large → 431 problem+json', async () => {
    const { app } = await gateway({ HOST: '127.0.0.1', PORT: '0' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (app.server.address() as { port: number }).port;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`));
        let data = '';
        socket.on('data', (d) => (data += d.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(answer).toMatch(/content-type: application\/problem\+json/i);
    } finally {
      await app.close();
    }
  });
});
