/**
 * gRPC server helpers: async handlers wrapped so they reply exactly once, each call a server
 * span continuing the caller's trace (traceparent metadata) with the caller's deadline in its
 * context, and metrics; AppErrors leave as their gRPC status (plus code and field errors in
 * trailing metadata), anything else as a bare INTERNAL. The standard grpc.health.v1 service
 * (./health-service.ts) is always registered and follows a HealthMonitor. A server may also serve
 * its services in this process (./in-process.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { DESCRIPTOR_SET_BASE64 } from '@iam/contracts';
import { SpanKind, SpanStatusCode, context } from '@opentelemetry/api';
import { AppError, internalError, isDependencyUnreachable } from '../errors';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { extractContext, startSpan, withDeadline } from '../trace';
import { withQueryDeadline } from '../db/query-deadline';
import { CLIENT_IP_KEY, USER_AGENT_KEY, withRequestContext } from '../request-context';
import { type CallAssertion, CALL_ASSERTION_KEY, verifyCallAssertion } from './assertion';
import { type GrpcHealth, HEALTH_SERVICE_NAME } from './health-service';
import { serveInProcess } from './in-process';
import { peerIs } from './tls';
import { ERROR_CODE_KEY, ERROR_REASON_KEY, FIELD_ERRORS_KEY, RETRY_AFTER_KEY, type RequestOf, type ResponseOf, type ServiceDef, splitPath } from './types';

export { GrpcHealth, HEALTH_SERVICE_NAME } from './health-service';

export interface CallContext {
  readonly metadata: grpc.Metadata;
  /** Absolute deadline in ms since epoch, when the caller set one. */
  readonly deadline?: number;
  readonly peer: string;
  /** Who calls, from its verified call assertion (./assertion.ts); absent on a method open to any caller. */
  readonly caller?: CallAssertion;
}

/** The end user a call acts for, from its verified call assertion, or undefined when the caller named none. */
export function actorOf(ctx: CallContext): string | undefined {
  return ctx.caller?.actor;
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
  /** Owning service (metrics label, and the audience its callers' assertions must name), e.g. `directory`. */
  readonly service: string;
  /** The key call assertions are signed with (INTERNAL_CALL_KEY); without it only methods open to any caller answer. */
  readonly callKey: Buffer | undefined;
  /** With mutual TLS: the DNS name each calling component's certificate carries (GRPC_TLS_PEER_NAMES; grpc/tls.ts). */
  readonly peerNames?: Readonly<Record<string, string>>;
}

/** The components a method answers (their call assertion's `iss`), or `ANY_CALLER`: no assertion needed (public reads). */
export type Callers = readonly string[] | typeof ANY_CALLER;
export const ANY_CALLER = 'any';

/**
 * Wraps async handlers into a grpc-js implementation; methods without a handler answer
 * UNIMPLEMENTED. `callers` says who may call: for every method, or per method. A call without a
 * valid assertion from one of them is UNAUTHENTICATED (PERMISSION_DENIED for another component)
 * before its handler runs.
 */
export function bindService<D extends ServiceDef>(
  definition: D,
  handlers: Partial<AsyncHandlers<D>>,
  deps: HandlerDeps,
  callers: Callers | { readonly default: Callers } & Partial<Record<keyof D, Callers>>,
): ServiceBinding {
  const implementation: grpc.UntypedServiceImplementation = {};
  let name = '';
  for (const [key, def] of Object.entries(definition)) {
    const { service, method } = splitPath(def.path);
    name = service;
    const handler = handlers[key as keyof D];
    const allowed = typeof callers === 'string' || Array.isArray(callers) ? (callers as Callers) : ((callers as Record<string, Callers>)[key] ?? (callers as { default: Callers }).default);
    implementation[key] = wrapUnary(service, method, handler as UnaryFn | undefined, deps, allowed);
  }
  return { name, definition, implementation };
}

/**
 * The verified caller of a call, or an AppError to answer with. With GRPC_TLS_PEER_NAMES, an
 * assertion counts only over a connection whose client certificate is the named component's.
 */
function callerOf(metadata: grpc.Metadata, deps: HandlerDeps, allowed: Callers, auth: AuthContextLike): CallAssertion | undefined {
  const raw = metadata.get(CALL_ASSERTION_KEY)[0];
  const token = typeof raw === 'string' ? raw : undefined;
  if (allowed === ANY_CALLER) {
    if (!token || !deps.callKey) return undefined;
    try {
      const caller = verifyCallAssertion(deps.callKey, token, deps.service);
      return peerIs(deps.peerNames, caller.from, auth) ? caller : undefined;
    } catch {
      return undefined;
    }
  }
  if (!deps.callKey) throw AppError.unauthenticated('The caller is not authenticated.');
  const caller = verifyCallAssertion(deps.callKey, token, deps.service);
  if (!peerIs(deps.peerNames, caller.from, auth)) throw AppError.unauthenticated('The caller is not authenticated.');
  if (!allowed.includes(caller.from)) throw AppError.forbidden('This caller may not call this method.');
  return caller;
}

type AuthContextLike = { sslPeerCertificate?: { subjectaltname?: string } } | null | undefined;

type UnaryFn = (request: unknown, ctx: CallContext) => Promise<unknown>;

/** Statuses that are the server's fault: they mark its span failed (OTel's gRPC conventions). */
const SERVER_FAULTS = new Set([
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);

function wrapUnary(grpcService: string, method: string, handler: UnaryFn | undefined, deps: HandlerDeps, allowed: Callers): grpc.handleUnaryCall<unknown, unknown> {
  const attributes = { 'rpc.system': 'grpc', 'rpc.service': grpcService, 'rpc.method': method, 'iam.service': deps.service };
  return (call, callback) => {
    const started = process.hrtime.bigint();
    const deadlineValue = call.getDeadline();
    const deadline = deadlineValue instanceof Date ? deadlineValue.getTime() : Number.isFinite(deadlineValue) ? Number(deadlineValue) : undefined;
    const parent = withDeadline(extractContext((k) => call.metadata.get(k)[0]), deadline);
    const { span, ctx } = startSpan(`${grpcService}/${method}`, { kind: SpanKind.SERVER, attributes }, parent);
    let replied = false;
    const reply = (err: grpc.ServiceError | Partial<grpc.StatusObject> | null, value?: unknown): void => {
      if (replied) return;
      replied = true;
      const code = err ? (err.code ?? grpc.status.UNKNOWN) : grpc.status.OK;
      const codeName = grpc.status[code] ?? String(code);
      deps.metrics.grpcServerDuration.observe(
        { service: deps.service, grpc_service: grpcService, grpc_method: method, grpc_code: codeName },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
      span.setAttribute('rpc.grpc.status_code', code);
      if (SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR, message: codeName });
      span.end();
      if (err) callback(err);
      else callback(null, value);
    };
    context.with(ctx, () => {
      if (!handler) {
        reply({ code: grpc.status.UNIMPLEMENTED, details: `${method} is not implemented` });
        return;
      }
      let caller: CallAssertion | undefined;
      try {
        caller = callerOf(call.metadata, deps, allowed, call.getAuthContext?.());
      } catch (err) {
        reply(toStatus(err, deps.logger, `${grpcService}/${method}`));
        return;
      }
      const callCtx: CallContext = { metadata: call.metadata, deadline, peer: call.getPeer(), ...(caller ? { caller } : {}) };
      const md = (key: string): string | undefined => {
        const v = call.metadata.get(key)[0];
        return typeof v === 'string' && v !== '' ? v : undefined;
      };
      // The actor only from the verified assertion: metadata anyone can set decides nothing.
      const rc = { actor: caller?.actor, clientIp: md(CLIENT_IP_KEY), userAgent: md(USER_AGENT_KEY) };
      // The handler's queries are bounded by the caller's deadline (db/query-deadline.ts): once the
      // caller has given up, a query still waiting (a blackholed database) fails and its
      // connection is reset, so nothing the caller was told failed commits later.
      const run = () => handler(call.request, callCtx);
      withRequestContext(rc, () => (deadline !== undefined && Number.isFinite(deadline) ? withQueryDeadline(deadline, run) : run())).then(
        (res) => reply(null, res),
        (err: unknown) => reply(toStatus(err, deps.logger, `${grpcService}/${method}`)),
      );
    });
  };
}

/**
 * Converts a thrown value to the status the caller sees. A dependency that cannot be reached (the
 * service's database restarting) is UNAVAILABLE, so the caller answers 503, not 500.
 */
export function toStatus(err: unknown, logger: Logger, where: string): Partial<grpc.StatusObject> {
  let app = err instanceof AppError ? err : undefined;
  if (!app && isDependencyUnreachable(err)) {
    logger.warn({ err: (err as Error).message, where }, 'dependency unreachable; answered UNAVAILABLE');
    app = AppError.unavailable(undefined, err);
  }
  if (!app || app.code === 'INTERNAL') {
    logger.error({ err: err instanceof AppError ? (err.cause ?? err) : err, where }, 'unhandled error in gRPC handler');
  }
  const e = app && app.code !== 'INTERNAL' ? app : internalError();
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_KEY, e.code);
  if (e.reason) metadata.set(ERROR_REASON_KEY, e.reason);
  if (e.errors) metadata.set(FIELD_ERRORS_KEY, Buffer.from(JSON.stringify(e.errors)));
  if (e.retryAfter !== undefined) metadata.set(RETRY_AFTER_KEY, String(e.retryAfter));
  return { code: e.grpcCode, details: e.detail ?? e.title, metadata };
}

// ---------------------------------------------------------------------------
// Server lifecycle

let reflectionPkg: ReturnType<typeof loadFileDescriptorSetFromBuffer> | undefined;
/**
 * Our descriptor set for ReflectionService, as one entry holding each proto file once.
 * ReflectionService decodes the `fileDescriptorProtos` of every entry it is given, and the
 * loaded set repeats every file (with its imports) under each of its ~120 types: 60–130 ms per
 * server at start against 4 ms with this one entry (measured); the index it builds is the same.
 */
function reflectionPackage(): ReturnType<typeof loadFileDescriptorSetFromBuffer> {
  if (!reflectionPkg) {
    const loaded = loadFileDescriptorSetFromBuffer(Buffer.from(DESCRIPTOR_SET_BASE64, 'base64'));
    const files = new Map<string, Buffer>();
    for (const entry of Object.values(loaded)) {
      for (const file of (entry as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos ?? []) files.set(file.toString('base64'), file);
    }
    reflectionPkg = { files: { format: 'Protocol Buffer 3 FileDescriptorProto', type: {}, fileDescriptorProtos: [...files.values()] } } as unknown as typeof loaded;
  }
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
  /** Connection recycling (see GrpcConnectionAge); absent = the defaults. */
  readonly connectionAge?: GrpcConnectionAge;
  /** How long to keep trying a port that is in use (default BIND_RETRY_MS; see bindRetrying). */
  readonly bindRetryMs?: number;
  /**
   * Also serve these services in this process as `in-process:<name>` (./in-process.ts; the
   * all-in-one process), until shutdown.
   */
  readonly inProcessName?: string;
}

/**
 * The default gRPC ports (50051–50055) lie in Linux's ephemeral range (32768–60999): an outgoing
 * connection of any process on the host (a database pool's, this process's own) may be given one
 * as its local port, and a listen on it then fails with EADDRINUSE until that connection closes.
 * Pooled connections close when idle (10 s), so the bind is tried again for this long.
 */
export const BIND_RETRY_MS = 15_000;

/**
 * How long a client connection may live before the server sends GOAWAY (grpc-js adds ±10 %
 * jitter), and how long calls still running on it may then take. Clients re-resolve the name when
 * their connection ends, so replicas added later (an HPA scale-out) receive calls within about
 * one connection age. 0 = never recycle.
 */
export interface GrpcConnectionAge {
  readonly maxAgeMs: number;
  readonly graceMs: number;
}

export const DEFAULT_CONNECTION_AGE: GrpcConnectionAge = { maxAgeMs: 60_000, graceMs: 15_000 };

export interface GrpcServerHandle {
  readonly port: number;
  /** The in-process target of these services (`in-process:<name>`), when served in process too. */
  readonly inProcessTarget?: string;
  /** Stops accepting calls, lets running ones finish for up to `timeoutMs`, then cancels the rest. */
  shutdown(timeoutMs: number): Promise<void>;
}

/**
 * A server from `create()` bound to `address`; while its port is in use (EADDRINUSE), a new one
 * tries again every 500 ms for `retryMs` (grpc-js keeps a failed bind's error for its address).
 */
async function bindRetrying(
  create: () => grpc.Server,
  address: string,
  credentials: grpc.ServerCredentials,
  logger: Logger,
  retryMs: number,
): Promise<{ server: grpc.Server; port: number }> {
  const until = Date.now() + retryMs;
  for (let attempt = 1; ; attempt++) {
    const server = create();
    try {
      const port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p)));
      });
      return { server, port };
    } catch (err) {
      server.forceShutdown();
      if (!/EADDRINUSE/.test((err as Error).message) || Date.now() >= until) throw err;
      if (attempt === 1) logger.warn({ address, retryForMs: retryMs }, 'gRPC port in use (an outgoing connection may hold it); trying again');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function startGrpcServer(opts: GrpcServerOptions): Promise<GrpcServerHandle> {
  const age = opts.connectionAge ?? DEFAULT_CONNECTION_AGE;
  const create = (): grpc.Server => {
    const server = new grpc.Server({
      'grpc.max_receive_message_length': 4 * 1024 * 1024,
      'grpc.keepalive_time_ms': 60_000,
      'grpc.keepalive_permit_without_calls': 1,
      ...(age.maxAgeMs > 0 ? { 'grpc.max_connection_age_ms': age.maxAgeMs, 'grpc.max_connection_age_grace_ms': age.graceMs } : {}),
    });
    for (const b of opts.bindings) server.addService(b.definition, b.implementation);
    opts.health.addToServer(server);
    // Server reflection (grpcurl, grpcui) for exactly the services this server implements.
    new ReflectionService(reflectionPackage(), { services: [...opts.bindings.map((b) => b.name), HEALTH_SERVICE_NAME] }).addToServer(server);
    return server;
  };
  const address = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  const credentials = opts.credentials ?? grpc.ServerCredentials.createInsecure();
  const { server, port } = await bindRetrying(create, address, credentials, opts.logger, opts.port === 0 ? 0 : (opts.bindRetryMs ?? BIND_RETRY_MS));
  opts.logger.info({ address: `${opts.host}:${port}`, services: opts.bindings.map((b) => b.name) }, 'gRPC server listening');
  const local = opts.inProcessName === undefined ? undefined : serveInProcess(opts.inProcessName);
  if (local) {
    for (const b of opts.bindings) local.addService(b.definition, b.implementation);
    opts.health.addToServer(local);
  }
  return {
    port,
    ...(local ? { inProcessTarget: local.target } : {}),
    shutdown: (timeoutMs) =>
      new Promise<void>((resolve) => {
        // In-process callers, like new connections, are refused from now on (UNAVAILABLE).
        local?.stop();
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
