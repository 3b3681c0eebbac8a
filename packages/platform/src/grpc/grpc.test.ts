import { type ClientDuplexStream, Metadata, status } from '@grpc/grpc-js';
import { healthV1, directoryV1 } from '@iam/contracts';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AppError } from '../errors';
import { HealthMonitor } from '../health';
import { currentTrace, remainingMs, runWithTrace } from '../trace';
import { eventually, testLogger, testMetrics } from '../testing';
import { installTestTracing } from '../testing/tracing';
import { createGrpcClient, fromServiceError, retryServiceConfig } from './client';
import { ANY_CALLER, GrpcHealth, bindService, startGrpcServer, type GrpcServerHandle } from './server';
import { ERROR_CODE_KEY, ERROR_REASON_KEY } from './types';

const TID = '0af7651916cd43dd8448eb211c80319c';

describe('gRPC helpers (in-process server on port 0)', () => {
  const tracing = installTestTracing();
  const logger = testLogger();
  const metrics = testMetrics();
  let server: GrpcServerHandle;
  let monitorUp = true;
  const monitor = new HealthMonitor({ logger, checks: { db: async () => { if (!monitorUp) throw new Error('down'); } } });
  const seen: { traceId?: string; deadline?: number; remaining?: number } = {};
  let flakyCalls = 0;

  beforeAll(async () => {
    await monitor.refresh();
    const health = new GrpcHealth();
    health.follow(monitor);
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      health,
      bindings: [
        bindService(
          directoryV1.UserServiceService,
          {
            getUser: async (req, ctx) => {
              seen.traceId = currentTrace()?.traceId;
              seen.deadline = ctx.deadline;
              seen.remaining = remainingMs();
              if (req.id === 'missing') throw AppError.notFound('No such user.');
              if (req.id === 'invalid') throw AppError.validation('Bad input.', [{ field: 'body.email', message: 'is not an email' }]);
              if (req.id === 'refused') throw new AppError('CONFLICT', 'Not enough stock.', { reason: 'commerce.insufficient_stock', errors: [{ field: 'lines[0].quantity', message: 'exceeds what is available' }] });
              if (req.id === 'boom') throw new Error('database password is hunter2');
              if (req.id === 'flaky' && ++flakyCalls < 3) throw AppError.unavailable();
              return directoryV1.User.fromPartial({ id: req.id, email: 'a@example.com', roles: ['r'] });
            },
            createUser: async () => {
              flakyCalls++;
              throw AppError.unavailable();
            },
          },
          { logger, metrics, service: 'test', callKey: undefined },
          // Transport behaviour, not who calls (assertion.test.ts).
          ANY_CALLER,
        ),
      ],
    });
  });

  afterAll(async () => {
    await server.shutdown(1_000);
  });

  const client = () =>
    createGrpcClient(directoryV1.UserServiceService, {
      target: `127.0.0.1:${server.port}`,
      metrics,
      idempotent: ['getUser'],
    });

  it('round-trips a call and propagates the trace id and a deadline', async () => {
    const c = client();
    const user = await runWithTrace({ traceId: TID, spanId: 'b7ad6b7169203331', flags: '01' }, () => c.call.getUser({ id: 'u1' }, { deadlineMs: 2_000 }));
    expect(user.id).toBe('u1');
    expect(user.roles).toEqual(['r']);
    expect(seen.traceId).toBe(TID);
    expect(seen.deadline).toBeGreaterThan(Date.now());
    expect(seen.deadline).toBeLessThanOrEqual(Date.now() + 2_000);
    expect(seen.remaining).toBeGreaterThan(0);
    expect(seen.remaining).toBeLessThanOrEqual(2_000);
    c.close();
  });

  it('a call is a client span, the handler a server span under it, in the caller\'s trace', async () => {
    const c = client();
    tracing.reset();
    await runWithTrace({ traceId: TID, spanId: 'b7ad6b7169203331', flags: '01' }, () => c.call.getUser({ id: 'u2' }));
    await expect(runWithTrace({ traceId: TID, spanId: 'b7ad6b7169203331', flags: '01' }, () => c.call.getUser({ id: 'boom' }))).rejects.toThrow();
    const spans = tracing.spans(TID);
    const [client1, client2] = spans.filter((s) => s.kind === SpanKind.CLIENT);
    const [server1, server2] = spans.filter((s) => s.kind === SpanKind.SERVER);
    expect(client1).toMatchObject({ name: 'directory.v1.UserService/GetUser', attributes: { 'rpc.system': 'grpc', 'rpc.grpc.status_code': 0 } });
    expect(client1!.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(server1).toMatchObject({ name: 'directory.v1.UserService/GetUser', attributes: { 'iam.service': 'test', 'rpc.grpc.status_code': 0 } });
    expect(server1!.parentSpanContext?.spanId).toBe(client1!.spanContext().spanId);
    expect(server2!.status.code).toBe(SpanStatusCode.ERROR);
    expect(client2!.status.code).toBe(SpanStatusCode.ERROR);
    c.close();
  });

  it('an AppError crosses the wire with its code, detail and field errors', async () => {
    const c = client();
    await expect(c.call.getUser({ id: 'missing' })).rejects.toMatchObject({ code: 'NOT_FOUND', detail: 'No such user.', httpStatus: 404 });
    await expect(c.call.getUser({ id: 'invalid' })).rejects.toMatchObject({
      code: 'VALIDATION',
      errors: [{ field: 'body.email', message: 'is not an email' }],
    });
    c.close();
  });

  it('a domain refusal crosses the wire with its reason (iam-error-reason metadata) beside its field errors, not as one', async () => {
    const c = client();
    const refused = (await c.call.getUser({ id: 'refused' }).catch((e: unknown) => e)) as AppError;
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'CONFLICT', httpStatus: 409, reason: 'commerce.insufficient_stock', detail: 'Not enough stock.' });
    expect(refused.errors).toEqual([{ field: 'lines[0].quantity', message: 'exceeds what is available' }]);
    const plain = (await c.call.getUser({ id: 'missing' }).catch((e: unknown) => e)) as AppError;
    expect(plain.reason).toBeUndefined();
    c.close();
  });

  it('a reason that is not `context.snake_case` is not taken from the wire', () => {
    const sent = (reason: string) => {
      const metadata = new Metadata();
      metadata.set(ERROR_CODE_KEY, 'CONFLICT');
      metadata.set(ERROR_REASON_KEY, reason);
      return fromServiceError(Object.assign(new Error('refused'), { code: status.ALREADY_EXISTS, details: 'refused', metadata }));
    };
    expect(sent('commerce.insufficient_stock').reason).toBe('commerce.insufficient_stock');
    for (const bad of ['INSUFFICIENT_STOCK', 'commerce', 'commerce.', 'Commerce.stock', 'commerce.insufficient stock', 'commerce.Stock', '<b>.x']) expect({ bad, reason: sent(bad).reason }).toEqual({ bad, reason: undefined });
  });

  it('an unexpected error leaves as INTERNAL without its message', async () => {
    const c = client();
    const err = (await c.call.getUser({ id: 'boom' }).catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('INTERNAL');
    expect(JSON.stringify({ d: err.detail, m: err.message })).not.toContain('hunter2');
    c.close();
  });

  it('a method without a handler answers UNIMPLEMENTED', async () => {
    const c = client();
    await expect(c.call.deleteUser({ id: 'x' })).rejects.toMatchObject({ code: 'UNIMPLEMENTED' });
    c.close();
  });

  it('retries idempotent methods on UNAVAILABLE, and only those', async () => {
    const c = client();
    flakyCalls = 0;
    await expect(c.call.getUser({ id: 'flaky' })).resolves.toMatchObject({ id: 'flaky' });
    expect(flakyCalls).toBe(3);
    flakyCalls = 0;
    await expect(c.call.createUser(directoryV1.CreateUserRequest.fromPartial({}))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(flakyCalls).toBe(1);
    c.close();
  });

  it('retries only the idempotent methods, on UNAVAILABLE only, a bounded number of times (service config)', () => {
    expect(retryServiceConfig(directoryV1.UserServiceService, ['getUser', 'listUsers'])).toEqual({
      methodConfig: [
        {
          name: [
            { service: 'directory.v1.UserService', method: 'GetUser' },
            { service: 'directory.v1.UserService', method: 'ListUsers' },
          ],
          retryPolicy: { maxAttempts: 3, initialBackoff: '0.05s', maxBackoff: '0.5s', backoffMultiplier: 3, retryableStatusCodes: ['UNAVAILABLE'] },
        },
      ],
    });
    expect(retryServiceConfig(directoryV1.UserServiceService, [])).toBeUndefined();
    expect(retryServiceConfig(directoryV1.UserServiceService, ['getUser'], 0)).toBeUndefined();
    expect((retryServiceConfig(directoryV1.UserServiceService, ['getUser'], 10) as { methodConfig: Array<{ retryPolicy: { maxAttempts: number } }> }).methodConfig[0]!.retryPolicy.maxAttempts).toBe(5);
  });

  it('an idempotent call to a server that is down fails within its deadline', async () => {
    const c = createGrpcClient(directoryV1.UserServiceService, { target: '127.0.0.1:1', metrics, defaultDeadlineMs: 1_000, idempotent: ['getUser'] });
    const t = Date.now();
    await expect(c.call.getUser({ id: 'x' })).rejects.toMatchObject({ code: expect.stringMatching(/^(UNAVAILABLE|TIMEOUT)$/) });
    expect(Date.now() - t).toBeLessThan(1_500);
    c.close();
  });

  it('an unreachable server is UNAVAILABLE with a detail that names no address', async () => {
    const c = createGrpcClient(directoryV1.UserServiceService, { target: '127.0.0.1:1', metrics, defaultDeadlineMs: 500 });
    const err = (await c.call.getUser({ id: 'x' }).catch((e: unknown) => e)) as AppError;
    expect(['UNAVAILABLE', 'TIMEOUT']).toContain(err.code);
    expect(err.detail).not.toContain('127.0.0.1');
    c.close();
  });

  it('answers server reflection (what grpcurl uses) with exactly the services it implements', async () => {
    const protoLoader = await import('@grpc/proto-loader');
    const grpc = await import('@grpc/grpc-js');
    const path = require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(path)) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: new (t: string, c: unknown) => { serverReflectionInfo(): ClientDuplexStream<unknown, Record<string, { service?: Array<{ name: string }>; fileDescriptorProto?: Buffer[] }>>; close(): void } } } };
    };
    const client = new pkg.grpc.reflection.v1.ServerReflection(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const ask = (req: Record<string, string>) =>
      new Promise<Record<string, { service?: Array<{ name: string }>; fileDescriptorProto?: Buffer[] }>>((resolve, reject) => {
        const call = client.serverReflectionInfo();
        call.on('data', (d) => {
          resolve(d);
          call.end();
        });
        call.on('error', reject);
        call.write(req);
      });
    const list = await ask({ listServices: '' });
    expect(list.listServicesResponse!.service!.map((s) => s.name).sort()).toEqual(['directory.v1.UserService', 'grpc.health.v1.Health']);
    const file = await ask({ fileContainingSymbol: 'directory.v1.UserService' });
    expect(file.fileDescriptorResponse!.fileDescriptorProto!.length).toBeGreaterThan(0);
    client.close();
  });

  it('serves grpc.health.v1 following the health monitor, per component and overall', async () => {
    const h = createGrpcClient(healthV1.HealthService, { target: `127.0.0.1:${server.port}`, metrics });
    const { SERVING, NOT_SERVING } = healthV1.HealthCheckResponse_ServingStatus;
    expect((await h.call.check({ service: '' })).status).toBe(SERVING);
    expect((await h.call.check({ service: 'db' })).status).toBe(SERVING);
    monitorUp = false;
    await monitor.refresh();
    expect((await h.call.check({ service: '' })).status).toBe(NOT_SERVING);
    expect((await h.call.check({ service: 'db' })).status).toBe(NOT_SERVING);
    monitorUp = true;
    await monitor.refresh();
    expect((await h.call.check({ service: '' })).status).toBe(SERVING);
    await expect(h.call.check({ service: 'nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    h.close();
  });

  it('Watch sends the current status at once, then only changes; unknown services are SERVICE_UNKNOWN', async () => {
    const grpc = await import('@grpc/grpc-js');
    const { SERVING, NOT_SERVING, SERVICE_UNKNOWN } = healthV1.HealthCheckResponse_ServingStatus;
    const raw = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const watch = (service: string) => {
      const got: number[] = [];
      const call = raw.makeServerStreamRequest(
        healthV1.HealthService.watch.path,
        healthV1.HealthService.watch.requestSerialize,
        healthV1.HealthService.watch.responseDeserialize,
        { service },
      );
      call.on('data', (r: healthV1.HealthCheckResponse) => got.push(r.status));
      call.on('error', () => undefined);
      return { got, cancel: () => call.cancel() };
    };
    const db = watch('db');
    const unknown = watch('nope');
    await eventually(() => db.got.length === 1 && unknown.got.length === 1);
    expect(db.got).toEqual([SERVING]);
    expect(unknown.got).toEqual([SERVICE_UNKNOWN]);
    await monitor.refresh(); // no change: nothing sent
    monitorUp = false;
    await monitor.refresh();
    await eventually(() => db.got.length === 2);
    monitorUp = true;
    await monitor.refresh();
    await eventually(() => db.got.length === 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(db.got).toEqual([SERVING, NOT_SERVING, SERVING]);
    db.cancel();
    unknown.cancel();
    raw.close();
  });

  it('at shutdown every Watch gets NOT_SERVING and ends, and the server stops at once', async () => {
    const grpc = await import('@grpc/grpc-js');
    const { SERVING, NOT_SERVING } = healthV1.HealthCheckResponse_ServingStatus;
    const health = new GrpcHealth();
    health.follow(monitor);
    await monitor.refresh();
    const s = await startGrpcServer({ host: '127.0.0.1', port: 0, logger, health, bindings: [] });
    const raw = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure());
    const got: number[] = [];
    const call = raw.makeServerStreamRequest(healthV1.HealthService.watch.path, healthV1.HealthService.watch.requestSerialize, healthV1.HealthService.watch.responseDeserialize, { service: '' });
    call.on('data', (r: healthV1.HealthCheckResponse) => got.push(r.status));
    const ended = new Promise<void>((resolve) => {
      call.on('end', resolve);
      call.on('error', () => resolve());
    });
    await eventually(() => got.length === 1);
    const t = Date.now();
    await s.shutdown(5_000);
    await ended;
    expect(Date.now() - t).toBeLessThan(2_000);
    expect(got).toEqual([SERVING, NOT_SERVING]);
    raw.close();
  });

  it('a port held by another socket (an outgoing connection given it as its local port) is tried again until it is free, within bindRetryMs', async () => {
    const net = await import('node:net');
    // The kernel's own pick: a port nothing listens on; a plain listener holds it like a connection would.
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    setTimeout(() => holder.close(), 1_200);
    const t = Date.now();
    const s = await startGrpcServer({ host: '127.0.0.1', port, logger, health: new GrpcHealth(), bindings: [], bindRetryMs: 10_000 });
    expect(s.port).toBe(port);
    expect(Date.now() - t).toBeGreaterThanOrEqual(1_000);
    await s.shutdown(1_000);

    // Held for longer than the retry: the start fails with the bind error.
    const still = net.createServer();
    await new Promise<void>((r) => still.listen(port, '127.0.0.1', r));
    await expect(startGrpcServer({ host: '127.0.0.1', port, logger, health: new GrpcHealth(), bindings: [], bindRetryMs: 600 })).rejects.toThrow(/EADDRINUSE/);
    await new Promise<void>((r) => still.close(() => r()));
  });
});
