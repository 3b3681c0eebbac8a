/**
 * The transport contract: one suite over both transports a client can use, loopback gRPC and the
 * in-process transport of the all-in-one process (in-process.ts). Deadlines and cancellation,
 * metadata and the caller assertion, errors (the same AppError, hence the same problem+json),
 * tracing, retries, health and shutdown must behave the same whichever carries the call.
 */
import { randomBytes } from 'node:crypto';
import { directoryV1, healthV1 } from '@iam/contracts';
import { SpanKind, SpanStatusCode, context } from '@opentelemetry/api';
import { AppError, toProblem } from '../errors';
import { HealthMonitor } from '../health';
import { queryDeadline } from '../db/query-deadline';
import { requestContext, withRequestContext } from '../request-context';
import { testLogger, testMetrics } from '../testing';
import { installTestTracing } from '../testing/tracing';
import { remainingMs, runWithTrace, withDeadline } from '../trace';
import { type CallSigner } from './assertion';
import { type CallOptions, createGrpcClient } from './client';
import { ANY_CALLER, type CallContext, GrpcHealth, type GrpcServerHandle, actorOf, bindService, startGrpcServer } from './server';

const KEY = randomBytes(32);
const TID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = { traceId: TID, spanId: '00f067aa0ba902b7', flags: '01' };

interface Seen {
  ctx?: CallContext;
  request?: unknown;
  remaining?: number;
  queryDeadline?: number;
  rc?: ReturnType<typeof requestContext>;
}

describe('the transport contract: loopback gRPC and in-process calls behave the same', () => {
  const tracing = installTestTracing();
  const logger = testLogger();
  const metrics = testMetrics();
  const seen: Seen = {};
  let flaky = 0;
  let writes = 0;
  let server: GrpcServerHandle;
  const monitor = new HealthMonitor({ logger, checks: { db: async () => undefined } });
  const name = `contract-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    await monitor.refresh();
    const health = new GrpcHealth();
    health.follow(monitor);
    const users = bindService(
      directoryV1.UserServiceService,
      {
        getUser: async (req, ctx) => {
          Object.assign(seen, { ctx, request: req, remaining: remainingMs(), queryDeadline: queryDeadline(), rc: requestContext() });
          if (req.id === 'missing') throw AppError.notFound('No such user.');
          if (req.id === 'invalid') throw AppError.validation('Bad input.', [{ field: 'body.email', message: 'is not an email' }]);
          if (req.id === 'refused') throw new AppError('CONFLICT', 'Not enough stock.', { reason: 'commerce.insufficient_stock', errors: [{ field: 'lines[0].quantity', message: 'exceeds what is available' }] });
          if (req.id === 'limited') throw AppError.rateLimited(7);
          if (req.id === 'boom') throw new Error('database password is hunter2');
          if (req.id === 'db-down') throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
          if (req.id === 'flaky' && ++flaky < 3) throw AppError.unavailable();
          if (req.id.startsWith('slow')) await new Promise((r) => setTimeout(r, Number(req.id.slice(5))));
          return directoryV1.User.fromPartial({ id: req.id, email: 'a@example.com', roles: ['r'] });
        },
        listUsers: async (_req, ctx) => {
          Object.assign(seen, { ctx, rc: requestContext() });
          return directoryV1.ListUsersResponse.fromPartial({});
        },
        createUser: async () => {
          writes++;
          throw AppError.unavailable();
        },
      },
      { logger, metrics, service: 'directory', callKey: KEY },
      { default: ['gateway'], listUsers: ANY_CALLER },
    );
    server = await startGrpcServer({ host: '127.0.0.1', port: 0, logger, health, bindings: [users], inProcessName: name });
  });

  afterAll(async () => {
    await server.shutdown(1_000);
  });

  const transports = [
    ['gRPC', () => `127.0.0.1:${server.port}`],
    ['in-process', () => `in-process:${name}`],
  ] as const;
  const clientOf = (target: string, signer: CallSigner | null = { key: KEY, from: 'gateway' }) =>
    createGrpcClient(directoryV1.UserServiceService, { target, metrics, idempotent: ['getUser'], ...(signer ? { assert: { signer, to: 'directory' } } : {}) });
  const failure = async (p: Promise<unknown>): Promise<AppError> => {
    const err = await p.then(() => undefined, (e: unknown) => e);
    if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
    return err;
  };

  describe.each(transports)('over %s', (_label, target) => {
    it('the handler gets a copy of the request as decoded from the wire, and the caller a copy of the response', async () => {
      const c = clientOf(target());
      const request = { id: 'u1' };
      const user = await c.call.getUser(request);
      expect(user).toEqual(directoryV1.User.fromPartial({ id: 'u1', email: 'a@example.com', roles: ['r'] }));
      expect(seen.request).toEqual(request);
      expect(seen.request).not.toBe(request);
      c.close();
    });

    it('carries the signed caller assertion, its actor and the request\'s origin, and nothing else of the caller\'s context', async () => {
      const c = clientOf(target());
      await withRequestContext({ actor: 'user-1', clientIp: '203.0.113.9', userAgent: 'curl/8' }, () => c.call.getUser({ id: 'u1' }));
      expect(seen.ctx!.caller).toEqual({ from: 'gateway', actor: 'user-1' });
      expect(actorOf(seen.ctx!)).toBe('user-1');
      expect(seen.rc).toEqual({ actor: 'user-1', clientIp: '203.0.113.9', userAgent: 'curl/8' });

      // Unsigned, to a method open to any caller: the caller's actor does not cross without an assertion.
      const unsigned = clientOf(target(), null);
      await withRequestContext({ actor: 'user-1' }, () => unsigned.call.listUsers(directoryV1.ListQuery.fromPartial({})));
      expect(seen.ctx!.caller).toBeUndefined();
      expect(seen.rc).toEqual({ actor: undefined, clientIp: undefined, userAgent: undefined });
      unsigned.close();
      c.close();
    });

    it('refuses a caller without an assertion, with another key, or of a component the method does not answer', async () => {
      const none = clientOf(target(), null);
      const forged = clientOf(target(), { key: randomBytes(32), from: 'gateway' });
      const other = clientOf(target(), { key: KEY, from: 'commerce' });
      expect((await failure(none.call.getUser({ id: 'u1' }))).code).toBe('UNAUTHENTICATED');
      expect((await failure(forged.call.getUser({ id: 'u1' }))).code).toBe('UNAUTHENTICATED');
      expect((await failure(other.call.getUser({ id: 'u1' }))).code).toBe('FORBIDDEN');
      for (const c of [none, forged, other]) c.close();
    });

    it('gives the handler the caller\'s deadline (its context, its queries), capped by the deadline of the work in progress', async () => {
      const c = clientOf(target());
      const before = Date.now();
      await c.call.getUser({ id: 'u1' }, { deadlineMs: 2_000 });
      expect(seen.ctx!.deadline).toBeGreaterThan(before);
      expect(seen.ctx!.deadline).toBeLessThanOrEqual(Date.now() + 2_000);
      expect(seen.queryDeadline).toBe(seen.ctx!.deadline);
      expect(seen.remaining).toBeGreaterThan(0);
      expect(seen.remaining).toBeLessThanOrEqual(2_000);

      const outer = Date.now() + 800;
      await context.with(withDeadline(context.active(), outer), () => c.call.getUser({ id: 'u1' }, { deadlineMs: 5_000 }));
      // Over gRPC the deadline crosses as a timeout (grpc-timeout), measured again on arrival: a few ms later.
      expect(seen.ctx!.deadline).toBeLessThanOrEqual(outer + 50);
      expect(seen.ctx!.deadline).toBeGreaterThan(outer - 50);
      c.close();
    });

    it('a handler slower than the deadline: the caller gets TIMEOUT when it passes, not the late answer', async () => {
      const c = clientOf(target());
      const err = await failure(c.call.getUser({ id: 'slow-400' }, { deadlineMs: 100 }));
      expect(err).toMatchObject({ code: 'TIMEOUT', detail: 'An upstream service did not answer in time.', httpStatus: 504 });
      // The work in progress had no time left: the call is not even sent.
      const spent = await context.with(withDeadline(context.active(), Date.now() - 1), () => failure(c.call.getUser({ id: 'u1' })));
      expect(spent.code).toBe('TIMEOUT');
      c.close();
    });

    it('a client span around the call, the handler a server span under it, in the caller\'s trace', async () => {
      const c = clientOf(target());
      tracing.reset();
      await runWithTrace(PARENT, () => c.call.getUser({ id: 'u1' }));
      await runWithTrace(PARENT, () => c.call.getUser({ id: 'boom' })).catch(() => undefined);
      const spans = tracing.spans(TID);
      const clients = spans.filter((s) => s.kind === SpanKind.CLIENT);
      const servers = spans.filter((s) => s.kind === SpanKind.SERVER);
      expect(clients.map((s) => s.name)).toEqual(['directory.v1.UserService/GetUser', 'directory.v1.UserService/GetUser']);
      expect(clients[0]!.parentSpanContext?.spanId).toBe(PARENT.spanId);
      expect(servers[0]!.parentSpanContext?.spanId).toBe(clients[0]!.spanContext().spanId);
      expect(servers[0]!.attributes).toMatchObject({ 'iam.service': 'directory', 'rpc.grpc.status_code': 0 });
      expect(clients[1]!.status.code).toBe(SpanStatusCode.ERROR);
      expect(servers[1]!.status.code).toBe(SpanStatusCode.ERROR);
      c.close();
    });

    it('retries an idempotent method on UNAVAILABLE, and never another', async () => {
      const c = clientOf(target());
      flaky = 0;
      await expect(c.call.getUser({ id: 'flaky' })).resolves.toMatchObject({ id: 'flaky' });
      expect(flaky).toBe(3);
      writes = 0;
      expect((await failure(c.call.createUser(directoryV1.CreateUserRequest.fromPartial({})))).code).toBe('UNAVAILABLE');
      expect(writes).toBe(1);
      c.close();
    });

    it('a method without a handler is UNIMPLEMENTED; the health service answers per component', async () => {
      const c = clientOf(target());
      expect((await failure(c.call.deleteUser({ id: 'x' }))).code).toBe('UNIMPLEMENTED');
      const h = createGrpcClient(healthV1.HealthService, { target: target(), metrics });
      expect((await h.call.check({ service: 'db' })).status).toBe(healthV1.HealthCheckResponse_ServingStatus.SERVING);
      expect((await failure(h.call.check({ service: 'nope' }))).code).toBe('NOT_FOUND');
      h.close();
      c.close();
    });
  });

  it('every failure leaves both transports as the same AppError, hence the same problem+json', async () => {
    const cases = ['missing', 'invalid', 'refused', 'limited', 'boom', 'db-down', 'slow-400'];
    const problems = async (target: string) => {
      const c = clientOf(target);
      const out = [];
      for (const id of cases) {
        const opts: CallOptions = { deadlineMs: id.startsWith('slow') ? 100 : 2_000 };
        const e = await failure(c.call.getUser({ id }, opts));
        out.push({ id, problem: toProblem(e, { instance: '/x', traceId: TID }), reason: e.reason, retryAfter: e.retryAfter, message: e.message });
      }
      c.close();
      return out;
    };
    const overGrpc = await problems(transports[0][1]());
    const inProcess = await problems(transports[1][1]());
    expect(inProcess).toEqual(overGrpc);
    expect(JSON.stringify(inProcess)).not.toContain('hunter2');
    expect(overGrpc.map((p) => p.problem.status)).toEqual([404, 400, 409, 429, 500, 503, 504]);
  });

  it('after shutdown, in-process calls are refused as UNAVAILABLE, as a closed port is', async () => {
    const health = new GrpcHealth();
    health.follow(monitor);
    const local = `closing-${randomBytes(4).toString('hex')}`;
    const s = await startGrpcServer({ host: '127.0.0.1', port: 0, logger, health, bindings: [], inProcessName: local });
    const h = createGrpcClient(healthV1.HealthService, { target: `in-process:${local}`, metrics, defaultDeadlineMs: 500 });
    expect((await h.call.check({ service: '' })).status).toBe(healthV1.HealthCheckResponse_ServingStatus.SERVING);
    await s.shutdown(1_000);
    expect((await failure(h.call.check({ service: '' }))).code).toBe('UNAVAILABLE');
    h.close();
  });
});
