import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { type ConfigError, readConfig } from './config';
import { createLogger } from './logger';
import { installTestTracing } from './testing/tracing';
import { SpanKind, activeTraceparent, currentTrace, extractContext, parseTraceIdHeader, remainingMs, runInContext, runWithTrace, startSpan, withSpan } from './trace';
import { setupTracing } from './tracing';
import { NO_TRACE_EXPORT, readTracingConfig } from './tracing-config';

const TID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('tracing on OpenTelemetry', () => {
  const tt = installTestTracing();
  afterEach(() => tt.reset());

  /** The trace and parent of a server span started from these request headers. */
  const serverSpanFrom = (headers: Record<string, string>) => {
    const { span } = startSpan('GET /x', { kind: SpanKind.SERVER }, extractContext((k) => headers[k], { traceIdHeader: true }));
    span.end();
    const [done] = tt.spans();
    tt.reset();
    return { traceId: done!.spanContext().traceId, parent: done!.parentSpanContext?.spanId };
  };

  it('continues a valid traceparent: same trace, the caller as parent', () => {
    expect(serverSpanFrom({ traceparent: `00-${TID}-${PARENT}-01` })).toEqual({ traceId: TID, parent: PARENT });
  });

  it('a traceparent wins over X-Trace-Id; a valid X-Trace-Id alone names a new root trace', () => {
    expect(serverSpanFrom({ traceparent: `00-${TID}-${PARENT}-01`, 'x-trace-id': 'a'.repeat(32) }).traceId).toBe(TID);
    expect(serverSpanFrom({ 'x-trace-id': 'A'.repeat(32) })).toEqual({ traceId: 'a'.repeat(32), parent: undefined });
  });

  it.each([
    ['garbage', 'not-a-traceparent'],
    ['uppercase hex', `00-${TID.toUpperCase()}-${PARENT}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['all-zero span id', `00-${TID}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TID}-${PARENT}-01`],
    ['trailing data on version 00', `00-${TID}-${PARENT}-01-extra`],
    ['too long', `00-${TID}-${PARENT}-01${'x'.repeat(200)}`],
  ])('ignores a malformed traceparent (%s) and starts a new trace', (_what, value) => {
    const got = serverSpanFrom({ traceparent: value, 'x-trace-id': `${TID}0` });
    expect(got.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(got.traceId).not.toBe(TID);
    expect(got.parent).toBeUndefined();
  });

  it('X-Trace-Id must be exactly 32 hex characters, not all zeros', () => {
    expect(parseTraceIdHeader(TID)).toBe(TID);
    expect(parseTraceIdHeader(TID.toUpperCase())).toBe(TID);
    expect(parseTraceIdHeader(`${TID}0`)).toBeNull();
    expect(parseTraceIdHeader('z'.repeat(32))).toBeNull();
    expect(parseTraceIdHeader('0'.repeat(32))).toBeNull();
    expect(parseTraceIdHeader(`${TID.slice(0, 31)}\n`)).toBeNull();
  });

  it('child spans, the active traceparent, and the deadline of the work', async () => {
    await runWithTrace({ traceId: TID, spanId: PARENT, flags: '01', deadline: Date.now() + 1_000 }, async () => {
      expect(currentTrace()).toMatchObject({ traceId: TID, spanId: PARENT, flags: '01' });
      expect(remainingMs()).toBeGreaterThan(900);
      await withSpan('work', {}, async () => {
        const t = currentTrace()!;
        expect(t.traceId).toBe(TID);
        expect(t.spanId).not.toBe(PARENT);
        expect(activeTraceparent()).toBe(`00-${TID}-${t.spanId}-01`);
        expect(remainingMs()).toBeLessThanOrEqual(1_000);
      });
    });
    const [work] = tt.spans(TID);
    expect(work!.name).toBe('work');
    expect(work!.parentSpanContext?.spanId).toBe(PARENT);
    expect(currentTrace()).toBeUndefined();
    expect(remainingMs()).toBeUndefined();
  });

  it('a failed span names only the error class', async () => {
    await expect(withSpan('failing', {}, async () => { throw new TypeError('secret detail'); })).rejects.toThrow('secret detail');
    const [s] = tt.spans();
    expect(s!.status).toEqual({ code: 2, message: 'TypeError' });
    expect(JSON.stringify(s!.attributes)).not.toContain('secret');
  });

  it('every log line written inside a span carries its traceId and spanId', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', service: 't', destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }) });
    const { span, ctx } = startSpan('logging', {});
    runInContext(ctx, () => logger.info('inside'));
    logger.info('outside');
    span.end();
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });
    expect(outside!.traceId).toBeUndefined();
  });
});

describe('tracing configuration and export', () => {
  const parse = (env: Record<string, string>) => readConfig(env, readTracingConfig);

  it('exports nothing unless an OTLP endpoint is set; the base endpoint gets /v1/traces', () => {
    expect(parse({}).otlpTracesUrl).toBeUndefined();
    expect(parse({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otlpTracesUrl).toBe('http://collector:4318/v1/traces');
    expect(parse({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces' }).otlpTracesUrl).toBe('https://b/traces');
    expect(parse({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%3D, x-team=iam' }).otlpHeaders).toEqual({ 'api-key': 'abc=', 'x-team': 'iam' });
    expect(parse({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toMatchObject({ sampler: 'parentbased_traceidratio', samplerRatio: 0.25 });
  });

  it('a bad value names its variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        parse(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://x:4317' })[0]).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT:/);
    expect(problems({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })[0]).toMatch(/^OTEL_EXPORTER_OTLP_HEADERS:/);
    expect(problems({ OTEL_TRACES_SAMPLER_ARG: '2' })[0]).toMatch(/^OTEL_TRACES_SAMPLER_ARG:/);
    expect(problems({ OTEL_TRACES_SAMPLER: 'sometimes' })[0]).toMatch(/^OTEL_TRACES_SAMPLER:/);
  });

  it('spans carry service.name, service.version and deployment.environment', async () => {
    /** The resource of a span made under a provider set up from `env`. */
    const attributes = async (env: Record<string, string>) => {
      const exporter = new InMemorySpanExporter();
      const tracing = setupTracing(parse(env), { serviceName: 'identity', exporters: [exporter] });
      startSpan('resource', {}).span.end();
      const [span] = exporter.getFinishedSpans();
      await tracing.shutdown();
      return span!.resource.attributes;
    };
    const version = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
    expect(await attributes({ DEPLOYMENT_ENVIRONMENT: 'staging' })).toMatchObject({
      'service.name': 'identity',
      'service.version': version,
      'deployment.environment.name': 'staging',
      'deployment.environment': 'staging',
    });
    const unset = await attributes({ SERVICE_VERSION: '1.4.2+build.7', OTEL_SERVICE_NAME: 'iam-identity' });
    expect(unset).toMatchObject({ 'service.name': 'iam-identity', 'service.version': '1.4.2+build.7' });
    expect(unset).not.toHaveProperty(['deployment.environment.name']);
  });

  it('without an exporter, spans record nothing but still carry ids', () => {
    const tracing = setupTracing(NO_TRACE_EXPORT, { serviceName: 't' });
    const { span, ctx } = startSpan('quiet', {});
    expect(span.isRecording()).toBe(false);
    expect(runInContext(ctx, () => currentTrace()?.traceId)).toMatch(/^[0-9a-f]{32}$/);
    span.end();
    return tracing.shutdown();
  });

  it('a collector that is down does not hold the shutdown for long', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const { port } = dead.address() as AddressInfo;
    await new Promise<void>((r) => dead.close(() => r()));
    const tracing = setupTracing(parse({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }), { serviceName: 't' });
    startSpan('lost', {}).span.end();
    const t = Date.now();
    await tracing.shutdown().catch(() => undefined);
    expect(Date.now() - t).toBeLessThan(4_000);
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT, spans go to the collector over OTLP/HTTP', async () => {
    const received: Array<{ url?: string; type?: string; bytes: number }> = [];
    const collector = createServer((req, res) => {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => {
        received.push({ url: req.url, type: req.headers['content-type'], bytes });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    try {
      const { port } = collector.address() as AddressInfo;
      const tracing = setupTracing(parse({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }), { serviceName: 't' });
      const { span } = startSpan('exported', {});
      expect(span.isRecording()).toBe(true);
      span.end();
      await tracing.shutdown();
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ url: '/v1/traces' });
      expect(received[0]!.bytes).toBeGreaterThan(0);
    } finally {
      collector.close();
    }
  });
});
