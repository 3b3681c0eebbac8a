/**
 * gRPC server helpers: async handlers wrapped so they reply exactly once, with trace context,
 * deadline and metrics; AppErrors leave as their gRPC status (plus code and field errors in
 * trailing metadata), anything else as a bare INTERNAL. The standard grpc.health.v1 service is
 * always registered and follows a HealthMonitor.
 */
import * as grpc from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { DESCRIPTOR_SET_BASE64, healthV1 } from '@iam/contracts';
import { AppError, internalError } from '../errors';
import type { HealthMonitor } from '../health';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { runWithTrace, traceFromCarrier } from '../trace';
import { ACTOR_KEY, ERROR_CODE_KEY, FIELD_ERRORS_KEY, RETRY_AFTER_KEY, type RequestOf, type ResponseOf, type ServiceDef, splitPath } from './types';

export interface CallContext {
  readonly metadata: grpc.Metadata;
  /** Absolute deadline in ms since epoch, when the caller set one. */
  readonly deadline?: number;
  readonly peer: string;
}

/** The end user a call acts for (ACTOR_KEY metadata), or undefined when the caller named none. */
export function actorOf(ctx: CallContext): string | undefined {
  const v = ctx.metadata.get(ACTOR_KEY)[0];
  return v === undefined ? undefined : v.toString();
}

export type AsyncHandlers<D extends ServiceDef> = {
  [K in keyof D]: (request: RequestOf<D[K]>, ctx: CallContext) => Promise<ResponseOf<D[K]>>;
};

export interface ServiceBinding {
  readonly name: string;
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
}

export interface HandlerDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Owning service (metrics label), e.g. `directory`. */
  readonly service: string;
}

/** Wraps async handlers into a grpc-js implementation; methods without a handler answer UNIMPLEMENTED. */
export function bindService<D extends ServiceDef>(
  definition: D,
  handlers: Partial<AsyncHandlers<D>>,
  deps: HandlerDeps,
): ServiceBinding {
  const implementation: grpc.UntypedServiceImplementation = {};
  let name = '';
  for (const [key, def] of Object.entries(definition)) {
    const { service, method } = splitPath(def.path);
    name = service;
    const handler = handlers[key as keyof D];
    implementation[key] = wrapUnary(service, method, handler as UnaryFn | undefined, deps);
  }
  return { name, definition: definition as grpc.ServiceDefinition, implementation };
}

type UnaryFn = (request: unknown, ctx: CallContext) => Promise<unknown>;

function wrapUnary(grpcService: string, method: string, handler: UnaryFn | undefined, deps: HandlerDeps): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const started = process.hrtime.bigint();
    let replied = false;
    const reply = (err: grpc.ServiceError | Partial<grpc.StatusObject> | null, value?: unknown): void => {
      if (replied) return;
      replied = true;
      const code = err ? (err.code ?? grpc.status.UNKNOWN) : grpc.status.OK;
      deps.metrics.grpcServerDuration.observe(
        { service: deps.service, grpc_service: grpcService, grpc_method: method, grpc_code: grpc.status[code] ?? String(code) },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
      if (err) callback(err as grpc.ServiceError);
      else callback(null, value);
    };
    const deadlineValue = call.getDeadline();
    const deadline = deadlineValue instanceof Date ? deadlineValue.getTime() : Number.isFinite(deadlineValue) ? Number(deadlineValue) : undefined;
    const trace = { ...traceFromCarrier((k) => call.metadata.get(k)[0]?.toString()), deadline };
    runWithTrace(trace, () => {
      if (!handler) {
        reply({ code: grpc.status.UNIMPLEMENTED, details: `${method} is not implemented` });
        return;
      }
      const ctx: CallContext = { metadata: call.metadata, deadline, peer: call.getPeer() };
      handler(call.request, ctx).then(
        (res) => reply(null, res),
        (err: unknown) => reply(toStatus(err, deps.logger, `${grpcService}/${method}`)),
      );
    });
  };
}

/** Converts a thrown value to the status the caller sees. */
export function toStatus(err: unknown, logger: Logger, where: string): Partial<grpc.StatusObject> {
  const app = err instanceof AppError ? err : undefined;
  if (!app || app.code === 'INTERNAL') {
    logger.error({ err: err instanceof AppError ? (err.cause ?? err) : err, where }, 'unhandled error in gRPC handler');
  }
  const e = app && app.code !== 'INTERNAL' ? app : internalError();
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_KEY, e.code);
  if (e.errors) metadata.set(FIELD_ERRORS_KEY, Buffer.from(JSON.stringify(e.errors)));
  if (e.retryAfter !== undefined) metadata.set(RETRY_AFTER_KEY, String(e.retryAfter));
  return { code: e.grpcCode, details: e.detail ?? e.title, metadata };
}

// ---------------------------------------------------------------------------
// grpc.health.v1

const { HealthCheckResponse_ServingStatus: ServingStatus } = healthV1;

/**
 * The standard health service. Service "" is the whole process; every HealthMonitor check is
 * also a service name of its own (e.g. "db", "bus"), so callers can tell what is down.
 */
export class GrpcHealth {
  private readonly statuses = new Map<string, healthV1.HealthCheckResponse_ServingStatus>([['', ServingStatus.NOT_SERVING]]);
  private readonly watchers = new Set<{ service: string; call: grpc.ServerWritableStream<healthV1.HealthCheckRequest, healthV1.HealthCheckResponse> }>();
  private shuttingDown = false;

  follow(monitor: HealthMonitor): void {
    monitor.onChange((s) => {
      for (const [name, st] of Object.entries(s.checks)) this.set(name, st === 'up');
      this.set('', s.ready);
    });
  }

  /** From now on every service is NOT_SERVING (graceful shutdown). */
  drain(): void {
    this.shuttingDown = true;
    for (const name of this.statuses.keys()) this.set(name, false);
  }

  private set(service: string, serving: boolean): void {
    const st = serving && !this.shuttingDown ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    if (this.statuses.get(service) === st) return;
    this.statuses.set(service, st);
    for (const w of this.watchers) if (w.service === service) w.call.write({ status: st });
  }

  binding(): ServiceBinding {
    const implementation: grpc.UntypedServiceImplementation = {
      check: (call: grpc.ServerUnaryCall<healthV1.HealthCheckRequest, healthV1.HealthCheckResponse>, cb: grpc.sendUnaryData<healthV1.HealthCheckResponse>) => {
        const st = this.statuses.get(call.request.service);
        if (st === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        else cb(null, { status: st });
      },
      watch: (call: grpc.ServerWritableStream<healthV1.HealthCheckRequest, healthV1.HealthCheckResponse>) => {
        const w = { service: call.request.service, call };
        this.watchers.add(w);
        call.write({ status: this.statuses.get(w.service) ?? ServingStatus.SERVICE_UNKNOWN });
        call.on('cancelled', () => this.watchers.delete(w));
        call.on('close', () => this.watchers.delete(w));
      },
    };
    return { name: 'grpc.health.v1.Health', definition: healthV1.HealthService as unknown as grpc.ServiceDefinition, implementation };
  }

  endWatches(): void {
    for (const w of this.watchers) w.call.end();
    this.watchers.clear();
  }
}

// ---------------------------------------------------------------------------
// Server lifecycle

let reflectionPkg: ReturnType<typeof loadFileDescriptorSetFromBuffer> | undefined;
function reflectionPackage(): ReturnType<typeof loadFileDescriptorSetFromBuffer> {
  reflectionPkg ??= loadFileDescriptorSetFromBuffer(Buffer.from(DESCRIPTOR_SET_BASE64, 'base64'));
  return reflectionPkg;
}

export interface GrpcServerOptions {
  readonly host: string;
  /** 0 lets the OS pick (tests). */
  readonly port: number;
  readonly bindings: readonly ServiceBinding[];
  readonly health: GrpcHealth;
  readonly logger: Logger;
  readonly credentials?: grpc.ServerCredentials;
}

export interface GrpcServerHandle {
  readonly port: number;
  /** Stops accepting calls, lets running ones finish for up to `timeoutMs`, then cancels the rest. */
  shutdown(timeoutMs: number): Promise<void>;
}

export async function startGrpcServer(opts: GrpcServerOptions): Promise<GrpcServerHandle> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 4 * 1024 * 1024,
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const bindings = [...opts.bindings, opts.health.binding()];
  for (const b of bindings) server.addService(b.definition, b.implementation);
  // Server reflection (grpcurl, grpcui) for exactly the services this server implements.
  new ReflectionService(reflectionPackage(), { services: bindings.map((b) => b.name) }).addToServer(server);
  const address = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, opts.credentials ?? grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  opts.logger.info({ address: `${opts.host}:${port}`, services: opts.bindings.map((b) => b.name) }, 'gRPC server listening');
  return {
    port,
    shutdown: (timeoutMs) =>
      new Promise<void>((resolve) => {
        opts.health.drain();
        opts.health.endWatches();
        const timer = setTimeout(() => {
          opts.logger.warn('gRPC graceful shutdown timed out; cancelling remaining calls');
          server.forceShutdown();
          resolve();
        }, timeoutMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
