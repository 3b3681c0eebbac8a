/**
 * One trace across the system (OpenTelemetry, spans kept in memory): a login goes gateway →
 * identity → directory; a password-reset request goes gateway → identity → outbox → event bus
 * (JetStream when NATS is reachable) → notification. Each hop is the child of the one before.
 */
import { SpanKind } from '@iam/platform/core';
import { type ReadableSpan, type TestTracing, eventually, installTestTracing, spanPath } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';

jest.setTimeout(60_000);

const { INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER } = SpanKind;

/** A readable line per span: kind, name and the service it ran in. */
const describeSpan = (s: ReadableSpan): string =>
  `${['internal', 'server', 'client', 'producer', 'consumer'][s.kind]} ${s.name}${s.attributes['iam.service'] ? ` @${String(s.attributes['iam.service'])}` : ''}`;

describe('tracing across the services (end to end)', () => {
  let tracing: TestTracing;
  let sys: TestSystem;

  beforeAll(async () => {
    tracing = installTestTracing();
    sys = await startTestSystem();
  });

  afterAll(async () => {
    await sys?.stop();
    await tracing?.shutdown();
  });

  it('a login is one trace: gateway → identity → directory (and its queries), continuing the caller\'s traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', {
      body: ADMIN,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-trace-id')).toBe(traceId);

    // The directory's credential check, and a query it made, sit under the gateway's request.
    const spans = await eventually(() => {
      const all = tracing.spans(traceId);
      return all.some((s) => s.kind === SERVER && s.name === 'POST /api/v1/auth/generate-jwt') ? all : undefined;
    });
    const verify = spans.find((s) => s.kind === SERVER && s.attributes['iam.service'] === 'directory');
    expect(verify).toBeDefined();
    expect(spanPath(verify!, spans).map(describeSpan)).toEqual([
      'server POST /api/v1/auth/generate-jwt @gateway',
      'client identity.v1.IdentityService/Login',
      'server identity.v1.IdentityService/Login @identity',
      `client ${verify!.name}`,
      `server ${verify!.name} @directory`,
    ]);
    const [gatewaySpan, loginCall] = spanPath(verify!, spans);
    expect(gatewaySpan!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    // As make run: the components call each other in process (E2E_TRANSPORT=grpc: over loopback), the same spans either way.
    expect(String(loginCall!.attributes['server.address'])).toMatch(process.env.E2E_TRANSPORT === 'grpc' ? /^127\.0\.0\.1$/ : /^in-process:/);
    expect(gatewaySpan!.attributes).toMatchObject({ 'http.route': '/api/v1/auth/generate-jwt', 'http.response.status_code': 200 });

    const query = spans.find((s) => s.attributes['db.system.name'] === 'postgresql' && s.attributes['iam.service'] === 'directory');
    expect(query).toBeDefined();
    expect(spanPath(query!, spans).map((s) => s.spanContext().spanId)).toContain(verify!.spanContext().spanId);
    expect(spans.some((s) => s.attributes['db.system.name'] === 'postgresql' && s.attributes['iam.service'] === 'identity')).toBe(true);
    // No statement carries a parameter value: the password never reaches a span.
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(ADMIN.password);
  });

  it('a password-reset request is one trace: gateway → identity → outbox → bus → notification', async () => {
    const res = await http(sys.url(), 'POST', '/api/v1/auth/password-reset/request', { body: { email: ADMIN.email } });
    expect(res.status).toBe(202);
    const traceId = res.headers.get('x-trace-id')!;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    const spans = await eventually(() => {
      const all = tracing.spans(traceId);
      return all.some((s) => s.kind === CONSUMER && s.attributes['iam.service'] === 'notification') ? all : undefined;
    }, 20_000, 50);
    const consumed = spans.find((s) => s.kind === CONSUMER && s.attributes['iam.service'] === 'notification')!;
    const path = spanPath(consumed, spans);
    expect(path.map(describeSpan)).toEqual([
      'server POST /api/v1/auth/password-reset/request @gateway',
      'client identity.v1.IdentityService/RequestPasswordReset',
      'server identity.v1.IdentityService/RequestPasswordReset @identity',
      'internal outbox append',
      'producer publish identity.password_reset.requested',
      'consumer process identity.password_reset.requested @notification',
    ]);
    expect(path.find((s) => s.kind === PRODUCER)!.attributes).toMatchObject({
      'messaging.system': sys.bus.kind === 'jetstream' ? 'nats' : 'memory',
      'messaging.destination.name': 'identity.password_reset.requested',
    });
    expect(path.map((s) => s.kind)).toEqual([SERVER, CLIENT, SERVER, INTERNAL, PRODUCER, CONSUMER]);
    // The outbox row was written by a query inside the append span.
    const append = path[3]!;
    expect(spans.some((s) => s.parentSpanContext?.spanId === append.spanContext().spanId && s.attributes['db.system.name'] === 'postgresql')).toBe(true);
    // The notification's own work (its queries) continues the same trace.
    await eventually(() => tracing.spans(traceId).some((s) => s.attributes['db.system.name'] === 'postgresql' && s.attributes['iam.service'] === 'notification'));
  });
});
