import { AppError, HealthMonitor, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { BODY_LIMIT_BYTES, buildApp } from './app';
import { readGatewayConfig } from './config';

const TRACE_RE = /^[0-9a-f]{32}$/;

describe('gateway HTTP basics (Minimal profile)', () => {
  let app: FastifyInstance;
  const status: Record<string, boolean> = {};
  const check = (name: string) => async () => {
    if (status[name] === false) throw new Error(`${name} down`);
  };
  const names = ['identity', 'identity.db', 'directory', 'directory.db', 'notification', 'notification.db', 'bus'];
  const health = new HealthMonitor({ logger: testLogger(), checks: Object.fromEntries(names.map((n) => [n, check(n)])) });

  beforeAll(async () => {
    const config = readConfig({ GATEWAY_PROFILES: '', ...NO_SHEDDING }, readGatewayConfig);
    app = await buildApp({ config, logger: testLogger(), metrics: testMetrics(), health });
    // A JSON route to exercise body handling (the profiles add the real ones).
    app.post(
      '/test/echo',
      { schema: { body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } } },
      async (req) => req.body,
    );
    app.get('/test/crash', async () => {
      throw new Error('secret internal detail at /srv/app.js:12');
    });
    // What a route answers when a service is down (gRPC UNAVAILABLE) or misses its deadline.
    app.get('/test/unavailable', async () => {
      throw AppError.unavailable();
    });
    app.get('/test/timeout', async () => {
      throw new AppError('TIMEOUT', 'An upstream service did not answer in time.');
    });
    app.get('/test/overloaded', async () => {
      throw new AppError('UNAVAILABLE', 'Overloaded.', { retryAfter: 7 });
    });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
  });

  const expectProblem = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number) => {
    expect(res.statusCode).toBe(status);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), instance: expect.any(String) });
    expect(body.traceId).toBe(res.headers['x-trace-id']);
    expect(res.body).not.toMatch(/stack|\.js:\d+|node_modules/);
    return body;
  };

  it('/health, /health/live → 200 {status: ok, timestamp}', async () => {
    for (const url of ['/health', '/health/live']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok', timestamp: expect.stringMatching(/Z$/) });
      expect(res.headers['x-trace-id']).toMatch(TRACE_RE);
    }
  });

  it('/health/ready and /api/v1/health follow the checks: 503 with db down, 200 again when it recovers', async () => {
    await health.refresh();
    expect((await app.inject({ url: '/health/ready' })).statusCode).toBe(200);
    // Minimal profile (spec §2 Health responses): status and timestamp, without db.
    expect((await app.inject({ url: '/api/v1/health' })).json()).toEqual({ status: 'ok', timestamp: expect.stringMatching(/Z$/) });

    status['directory.db'] = false;
    status.directory = false;
    await health.refresh();
    const ready = await app.inject({ url: '/health/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks).toMatchObject({ 'directory.db': 'down', 'identity.db': 'up' });
    const legacy = await app.inject({ url: '/api/v1/health' });
    expect(legacy.statusCode).toBe(503);
    expect(legacy.json()).toEqual({ status: 'unavailable', timestamp: expect.any(String) });

    status['directory.db'] = true;
    status.directory = true;
    status.bus = false;
    await health.refresh();
    expect((await app.inject({ url: '/health/ready' })).statusCode).toBe(503);
    expect((await app.inject({ url: '/api/v1/health' })).json()).toMatchObject({ status: 'unavailable' });

    status.bus = true;
    await health.refresh();
    expect((await app.inject({ url: '/health/ready' })).statusCode).toBe(200);
  });

  it('/metrics → Prometheus text with the HTTP histogram', async () => {
    await app.inject({ url: '/health' });
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('http_server_request_duration_seconds_bucket{');
    expect(res.body).toContain('route="/health"');
  });

  it('unknown route → 404 problem+json with X-Trace-Id; a known path with another method → 405 with Allow', async () => {
    expectProblem(await app.inject({ url: '/no/such/route' }), 404);
    const res = await app.inject({ method: 'DELETE', url: '/health' });
    expectProblem(res, 405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect((await app.inject({ method: 'PUT', url: '/test/echo' })).headers.allow).toBe('POST');
  });

  it('security headers for an API (helmet, no CSP on JSON); no CORS headers without CORS_ORIGINS', async () => {
    const res = await app.inject({ url: '/health', headers: { origin: 'https://app.example' } });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('malformed JSON → 400; wrong content type → 415; oversized body → 413; schema violation → 400 with field errors', async () => {
    expectProblem(await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: '{"n": ' }), 400);
    expectProblem(await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'text/plain' }, payload: 'n=1' }), 415);
    expectProblem(await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'n=1' }), 415);
    const big = JSON.stringify({ n: 1, pad: 'x'.repeat(BODY_LIMIT_BYTES) });
    expectProblem(await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: big }), 413);
    const bad = expectProblem(await app.inject({ method: 'POST', url: '/test/echo', payload: { n: 'one' } }), 400);
    expect(bad.errors).toEqual([{ field: 'body.n', message: expect.any(String) }]);
    const unknown = expectProblem(await app.inject({ method: 'POST', url: '/test/echo', payload: { n: 1, extra: true } }), 400);
    expect(unknown.errors).toEqual([{ field: 'body.extra', message: 'is not allowed' }]);
    const ok = await app.inject({ method: 'POST', url: '/test/echo', payload: { n: 1 } });
    expect(ok.statusCode).toBe(200);
  });

  it('an unexpected error → 500 problem+json without message or stack', async () => {
    const body = expectProblem(await app.inject({ url: '/test/crash' }), 500);
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
  });

  it('a 503 or 504 tells the caller when to try again (Retry-After), its own value when the error names one', async () => {
    for (const url of ['/test/unavailable', '/test/timeout']) {
      const res = await app.inject({ url });
      expectProblem(res, url.endsWith('timeout') ? 504 : 503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect((await app.inject({ url: '/test/overloaded' })).headers['retry-after']).toBe('7');
    // Other errors name no time.
    expect((await app.inject({ url: '/test/crash' })).headers['retry-after']).toBeUndefined();
  });

  it('continues a valid traceparent or X-Trace-Id, ignores malformed ones', async () => {
    const tid = 'abcdef0123456789abcdef0123456789';
    expect((await app.inject({ url: '/health', headers: { traceparent: `00-${tid}-0123456789abcdef-01` } })).headers['x-trace-id']).toBe(tid);
    expect((await app.inject({ url: '/health', headers: { 'x-trace-id': tid } })).headers['x-trace-id']).toBe(tid);
    const err = await app.inject({ url: '/nope', headers: { traceparent: `00-${tid}-0123456789abcdef-01` } });
    expect(JSON.parse(err.body).traceId).toBe(tid);
    for (const bad of ['00-xyz', `00-${tid}-0123456789abcdef`, 'a'.repeat(500)]) {
      const id = (await app.inject({ url: '/health', headers: { traceparent: bad, 'x-trace-id': bad } })).headers['x-trace-id'];
      expect(id).toMatch(TRACE_RE);
      expect(bad).not.toContain(String(id));
    }
  });
});
