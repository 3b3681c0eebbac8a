/**
 * Promise-based gRPC clients over generated definitions. Calls are balanced per call, not per
 * connection: the channel resolves its target (`dns:///name:port`, or a plain `host:port`) to
 * every address and spreads calls round-robin over them; when a server ends a connection (its
 * `grpc.max_connection_age_ms`), the channel resolves the name again, so new replicas behind a
 * headless Service get calls within a connection age. Every call is a client span whose
 * context crosses in the metadata (W3C traceparent), and carries a deadline: the caller's own,
 * capped by the deadline of the work in progress. Methods listed as idempotent are retried by
 * grpc-js itself (service-config retryPolicy: UNAVAILABLE only, bounded attempts and backoff,
 * within the deadline); others never are, except a call the server refused before reading it
 * (a connection recycle's race), which grpc-js retries transparently. Failures arrive as AppErrors (the server's code and
 * field errors when it sent them). A target `in-process:<name>` selects the in-process transport
 * (./in-process.ts, the all-in-one process only) under the same spans, metadata, deadlines,
 * retries and error mapping.
 */
import * as grpc from '@grpc/grpc-js';
import { type Context, SpanKind, SpanStatusCode, context } from '@opentelemetry/api';
import { AppError, type ErrorCode, ERROR_CODES, type FieldError, isErrorReason } from '../errors';
import type { Metrics } from '../metrics';
import { CLIENT_IP_KEY, USER_AGENT_KEY, requestContext } from '../request-context';
import { injectContext, remainingMs, startSpan } from '../trace';
import { CALL_ASSERTION_KEY, type CallSigner, signCallAssertion } from './assertion';
import { RETRY_POLICY, type UnaryTransport, inProcessTransport, isInProcessTarget, methodPaths } from './in-process';
import { ERROR_CODE_KEY, ERROR_REASON_KEY, FIELD_ERRORS_KEY, RETRY_AFTER_KEY, type RequestOf, type ResponseOf, type ServiceDef, splitPath } from './types';

export interface CallOptions {
  /** Per-call deadline in ms (default: the client's). */
  readonly deadlineMs?: number;
}

export type AsyncClient<D extends ServiceDef> = {
  readonly [K in keyof D]: (request: RequestOf<D[K]>, opts?: CallOptions) => Promise<ResponseOf<D[K]>>;
};

export interface GrpcClientOptions<D extends ServiceDef> {
  /** host:port (a gRPC channel), or in-process:<name> (a server registered in this process, ./in-process.ts) */
  readonly target: string;
  readonly metrics: Metrics;
  readonly credentials?: grpc.ChannelCredentials;
  readonly defaultDeadlineMs?: number;
  /** Methods that are safe to repeat (reads, and writes that are idempotent by design). */
  readonly idempotent?: readonly (keyof D)[];
  /** Retries of an idempotent call after the first attempt (default 2; grpc-js allows at most 4). */
  readonly maxRetries?: number;
  /** Shortest time between two DNS resolutions of the target (ms, default 5000; grpc-js's own is 30000). */
  readonly minResolutionIntervalMs?: number;
  /**
   * Signs every call with a call assertion (./assertion.ts) for service `to`, naming the actor of
   * the request context (the user the work is for). Without it calls carry none: only methods
   * open to any caller answer them (a service's public reads, health).
   */
  readonly assert?: { readonly signer: CallSigner; readonly to: string };
}

export interface ClientHandle<D extends ServiceDef> {
  readonly call: AsyncClient<D>;
  close(): void;
}

/** Health probes are not traced: they run every few seconds outside any request. */
const UNTRACED_SERVICES = new Set(['grpc.health.v1.Health']);

/**
 * The channel's service config: round_robin over every resolved address (per-call balancing),
 * and a retryPolicy for the idempotent methods (UNAVAILABLE only). grpc-js spaces attempts by a
 * random backoff below 50 ms, 150 ms, 450 ms … (capped at 500 ms).
 */
export function channelServiceConfig(definition: ServiceDef, idempotent: readonly PropertyKey[], maxRetries = 2): { loadBalancingConfig: object[]; methodConfig?: object[] } {
  const retry = retryServiceConfig(definition, idempotent, maxRetries);
  return { loadBalancingConfig: [{ round_robin: {} }], ...retry };
}

/** The retry part of the service config, or undefined when no method may be retried. */
export function retryServiceConfig(definition: ServiceDef, idempotent: readonly PropertyKey[], maxRetries = 2): { methodConfig: object[] } | undefined {
  const names = Object.entries(definition)
    .filter(([key]) => idempotent.includes(key))
    .map(([, def]) => splitPath(def.path));
  const maxAttempts = retryAttempts(maxRetries);
  if (names.length === 0 || maxAttempts < 2) return undefined;
  return {
    methodConfig: [
      {
        name: names,
        retryPolicy: {
          maxAttempts,
          initialBackoff: `${RETRY_POLICY.initialBackoffMs / 1000}s`,
          maxBackoff: `${RETRY_POLICY.maxBackoffMs / 1000}s`,
          backoffMultiplier: RETRY_POLICY.backoffMultiplier,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  };
}

export function createGrpcClient<D extends ServiceDef>(definition: D, opts: GrpcClientOptions<D>): ClientHandle<D> {
  const transport = isInProcessTarget(opts.target)
    ? inProcessTransport(opts.target, methodPaths(definition, opts.idempotent ?? []), retryAttempts(opts.maxRetries))
    : channelTransport(definition, opts);
  const defaultDeadline = opts.defaultDeadlineMs ?? 5_000;
  const [host = opts.target, port] = isInProcessTarget(opts.target) ? [opts.target] : splitTarget(opts.target);
  const call = {} as Record<keyof D, (req: unknown, o?: CallOptions) => Promise<unknown>>;
  for (const [key, def] of Object.entries(definition) as [keyof D, D[keyof D]][]) {
    const { service, method } = splitPath(def.path);
    const traced = !UNTRACED_SERVICES.has(service);
    const attributes = { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method, 'server.address': host, ...(port ? { 'server.port': port } : {}) };
    call[key] = async (request, o) => {
      const budget = Math.min(o?.deadlineMs ?? defaultDeadline, remainingMs() ?? Infinity);
      const deadline = Date.now() + Math.max(budget, 0);
      const started = process.hrtime.bigint();
      const s = traced ? startSpan(`${service}/${method}`, { kind: SpanKind.CLIENT, attributes }) : undefined;
      try {
        const res = await transport.unary(def, request, callMetadata(opts.assert, s?.ctx ?? context.active()), deadline);
        opts.metrics.grpcClientDuration.observe({ grpc_service: service, grpc_method: method, grpc_code: 'OK' }, seconds(started));
        s?.span.setAttribute('rpc.grpc.status_code', grpc.status.OK);
        return res;
      } catch (e) {
        const err = e as grpc.ServiceError;
        const codeName = grpc.status[err.code] ?? 'UNKNOWN';
        opts.metrics.grpcClientDuration.observe({ grpc_service: service, grpc_method: method, grpc_code: codeName }, seconds(started));
        if (s) {
          s.span.setAttribute('rpc.grpc.status_code', err.code ?? grpc.status.UNKNOWN);
          s.span.setStatus({ code: SpanStatusCode.ERROR, message: codeName });
        }
        throw fromServiceError(err);
      } finally {
        s?.span.end();
      }
    };
  }
  return { call: call as unknown as AsyncClient<D>, close: () => transport.close() };
}

/** Attempts of an idempotent call: the first and its retries (grpc-js allows at most 5). */
function retryAttempts(maxRetries = 2): number {
  return Math.min(Math.max(maxRetries, 0) + 1, RETRY_POLICY.maxAttemptsCap);
}

/** The gRPC transport: a grpc-js channel to `opts.target` (HTTP/2, balanced, retried by its service config). */
function channelTransport<D extends ServiceDef>(definition: D, opts: GrpcClientOptions<D>): UnaryTransport {
  const serviceConfig = channelServiceConfig(definition, opts.idempotent ?? [], opts.maxRetries);
  const client = new grpc.Client(opts.target, opts.credentials ?? grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 60_000,
    // Always on: besides the retryPolicy of the idempotent methods, it lets grpc-js retry a call
    // the server refused before reading it (REFUSED_STREAM, racing its GOAWAY at the connection's
    // max age) transparently, whatever the method: such a call never reached a handler.
    'grpc.enable_retries': 1,
    'grpc.service_config': JSON.stringify(serviceConfig),
    // Only our own config: no service config taken from DNS TXT records.
    'grpc.service_config_disable_resolution': 1,
    'grpc.dns_min_time_between_resolutions_ms': opts.minResolutionIntervalMs ?? 5_000,
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
  });
  return {
    unary: (def, request, md, deadline) => {
      const attempt = () =>
        new Promise((resolve, reject) => {
          client.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, request, md, { deadline }, (err, res) =>
            err ? reject(err) : resolve(res),
          );
        });
      return retryRefused(attempt, deadline);
    },
    close: () => client.close(),
  };
}

/** The metadata of a call, whatever its transport: the signed assertion, where the request came from, the trace. */
function callMetadata(assert: GrpcClientOptions<ServiceDef>['assert'], ctx: Context): grpc.Metadata {
  const md = new grpc.Metadata();
  // The request this call serves (request-context.ts): who (signed into the assertion), from where.
  const rc = requestContext();
  if (assert) md.set(CALL_ASSERTION_KEY, signCallAssertion(assert.signer.key, { from: assert.signer.from, to: assert.to, actor: rc?.actor }));
  if (rc?.clientIp) md.set(CLIENT_IP_KEY, rc.clientIp);
  if (rc?.userAgent) md.set(USER_AGENT_KEY, rc.userAgent);
  injectContext((name, value) => md.set(name, value), ctx);
  return md;
}

/** grpc-js's status detail for a stream the server reset with REFUSED_STREAM. */
const REFUSED = 'Stream refused by server';

/**
 * A call the server refused before reading it (RST_STREAM REFUSED_STREAM: "no processing has
 * occurred", RFC 9113 §8.7; a connection closing at its max age) is safe to send again, whatever
 * the method. grpc-js retries such a call once by itself; a second refusal (two recycles in a
 * row) is retried here, a few times, within the call's deadline.
 */
async function retryRefused<T>(attempt: () => Promise<T>, deadline: number): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      const e = err as grpc.ServiceError;
      if (tries >= 4 || e.code !== grpc.status.UNAVAILABLE || e.details !== REFUSED || Date.now() >= deadline) throw err;
    }
  }
}

function splitTarget(target: string): [string, number | undefined] {
  const m = /^(?:dns:(?:\/\/[^/]*\/)?)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(target);
  return m ? [m[1]!, m[2] ? Number(m[2]) : undefined] : [target, undefined];
}

function seconds(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const BY_STATUS: Partial<Record<grpc.status, ErrorCode>> = {
  [grpc.status.INVALID_ARGUMENT]: 'VALIDATION',
  [grpc.status.UNAUTHENTICATED]: 'UNAUTHENTICATED',
  [grpc.status.PERMISSION_DENIED]: 'FORBIDDEN',
  [grpc.status.NOT_FOUND]: 'NOT_FOUND',
  [grpc.status.ALREADY_EXISTS]: 'CONFLICT',
  [grpc.status.RESOURCE_EXHAUSTED]: 'RATE_LIMITED',
  [grpc.status.UNIMPLEMENTED]: 'UNIMPLEMENTED',
  [grpc.status.UNAVAILABLE]: 'UNAVAILABLE',
  [grpc.status.DEADLINE_EXCEEDED]: 'TIMEOUT',
};

/**
 * Rebuilds the AppError a server sent (code, detail, reason, field errors, Retry-After). Transport failures (no code from our server) keep only a
 * generic detail: their messages name hosts and ports and must not reach end users.
 */
export function fromServiceError(err: grpc.ServiceError): AppError {
  const sent = err.metadata?.get(ERROR_CODE_KEY)[0]?.toString();
  if (sent && sent in ERROR_CODES) {
    const raw = err.metadata.get(FIELD_ERRORS_KEY)[0];
    let errors: FieldError[] | undefined;
    if (raw) {
      try {
        errors = JSON.parse(raw.toString()) as FieldError[];
      } catch {
        errors = undefined;
      }
    }
    const retryAfter = Number(err.metadata.get(RETRY_AFTER_KEY)[0]?.toString() ?? NaN);
    const reason = err.metadata.get(ERROR_REASON_KEY)[0]?.toString();
    return new AppError(sent as ErrorCode, err.details, {
      reason: reason !== undefined && isErrorReason(reason) ? reason : undefined,
      errors,
      retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined,
      cause: err,
    });
  }
  // A stream reset without a status (the server dropped the call under load, or the connection broke
  // mid-call) is a transport failure, not a bug in the server: 503, never 500.
  const reset = err.code === grpc.status.INTERNAL && /RST_STREAM|without gRPC status/.test(err.details ?? '');
  const code = reset ? 'UNAVAILABLE' : BY_STATUS[err.code] ?? 'INTERNAL';
  const detail = code === 'UNAVAILABLE' ? 'An upstream service is unavailable; try again shortly.'
    : code === 'TIMEOUT' ? 'An upstream service did not answer in time.'
    : undefined;
  return new AppError(code, detail, { cause: err });
}
