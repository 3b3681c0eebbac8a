import { Writable } from 'node:stream';
import { HealthMonitor, createLogger, readConfig } from '@iam/platform/core';
import { installTestTracing, NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app';
import { readGatewayConfig } from '../../config';

const TID = '0af7651916cd43dd8448eb211c80319c';

describe('trace plugin: every request is a server span', () => {
  const tracing = installTestTracing();
  const lines: Array<Record<string, unknown>> = [];
  let app: FastifyInstance;

  beforeAll(async () => {
    const logger = createLogger({
      level: 'info',
      service: 'gateway',
      destination: new Writable({
        write: (chunk, _enc, cb) => {
          lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
          cb();
        },
      }),
    });
    const health = new HealthMonitor({ logger: testLogger(), checks: {} });
    app = await buildApp({ config: readConfig({ GATEWAY_PROFILES: '', ...NO_SHEDDING }, readGatewayConfig), logger, metrics: testMetrics(), health });
    app.get('/test/crash', async () => {
      throw new Error('boom');
    });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    tracing.reset();
    lines.length = 0;
  });

  it('continues the caller\'s traceparent; X-Trace-Id is the span\'s trace id; the route and status are recorded', async () => {
    const res = await app.inject({ url: '/health/live', headers: { traceparent: `00-${TID}-b7ad6b7169203331-01` } });
    expect(res.headers['x-trace-id']).toBe(TID);
    const [span] = tracing.spans(TID);
    expect(span).toMatchObject({
      name: 'GET /health/live',
      kind: 1,
      attributes: { 'http.request.method': 'GET', 'http.route': '/health/live', 'url.path': '/health/live', 'http.response.status_code': 200, 'iam.service': 'gateway' },
    });
    expect(span!.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
  });

  it('a 500 marks the span failed, a 404 does not; each has its own trace', async () => {
    const crash = await app.inject({ url: '/test/crash' });
    const missing = await app.inject({ url: '/nope' });
    expect(crash.headers['x-trace-id']).not.toBe(missing.headers['x-trace-id']);
    const [c] = tracing.spans(String(crash.headers['x-trace-id']));
    const [m] = tracing.spans(String(missing.headers['x-trace-id']));
    expect(c).toMatchObject({ name: 'GET /test/crash', status: { code: 2 }, attributes: { 'http.response.status_code': 500 } });
    expect(m).toMatchObject({ name: 'GET', status: { code: 0 }, attributes: { 'http.response.status_code': 404 } });
    expect(m!.parentSpanContext).toBeUndefined();
  });

  it('log lines of a request, the access log included, carry its traceId and spanId', async () => {
    const res = await app.inject({ url: '/test/crash', headers: { 'x-trace-id': TID } });
    expect(res.headers['x-trace-id']).toBe(TID);
    const [span] = tracing.spans(TID);
    const mine = lines.filter((l) => l.traceId === TID);
    expect(mine.map((l) => l.msg)).toEqual(expect.arrayContaining(['request failed', 'request']));
    expect(mine.every((l) => l.spanId === span!.spanContext().spanId)).toBe(true);
  });

  it('probes and scrapes are not in the access log at info (they come every few seconds)', async () => {
    for (const url of ['/health/ready', '/health/live', '/metrics']) await app.inject({ url });
    await app.inject({ url: '/nothing-here' });
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.route)).toEqual(['unmatched']);
  });
});
