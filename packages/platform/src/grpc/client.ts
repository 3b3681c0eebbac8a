/**
 * Promise-based gRPC clients over generated definitions. Every call carries the current trace
 * (traceparent metadata) and a deadline: the caller's own, capped by the deadline of the work in
 * progress. Only methods listed as idempotent are retried, and only on UNAVAILABLE.
 * Failures arrive as AppErrors (the server's code and field errors when it sent them).
 */
import * as grpc from '@grpc/grpc-js';
import { AppError, type ErrorCode, ERROR_CODES, type FieldError } from '../errors';
import type { Metrics } from '../metrics';
import { currentTrace, formatTraceparent, remainingMs } from '../trace';
import { ACTOR_KEY, ERROR_CODE_KEY, FIELD_ERRORS_KEY, RETRY_AFTER_KEY, type RequestOf, type ResponseOf, type ServiceDef, splitPath } from './types';

export interface CallOptions {
  /** Per-call deadline in ms (default: the client's). */
  readonly deadlineMs?: number;
  /** The end user this call acts for (a token's `sub`), sent as ACTOR_KEY metadata. */
  readonly actor?: string;
}

export type AsyncClient<D extends ServiceDef> = {
  readonly [K in keyof D]: (request: RequestOf<D[K]>, opts?: CallOptions) => Promise<ResponseOf<D[K]>>;
};

export interface GrpcClientOptions<D extends ServiceDef> {
  /** host:port */
  readonly target: string;
  readonly metrics: Metrics;
  readonly credentials?: grpc.ChannelCredentials;
  readonly defaultDeadlineMs?: number;
  /** Methods that are safe to repeat (reads, and writes that are idempotent by design). */
  readonly idempotent?: readonly (keyof D)[];
  readonly maxRetries?: number;
}

export interface ClientHandle<D extends ServiceDef> {
  readonly call: AsyncClient<D>;
  close(): void;
}

export function createGrpcClient<D extends ServiceDef>(definition: D, opts: GrpcClientOptions<D>): ClientHandle<D> {
  const client = new grpc.Client(opts.target, opts.credentials ?? grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 60_000,
    'grpc.enable_retries': 0,
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
  });
  const idempotent = new Set<keyof D>(opts.idempotent ?? []);
  const maxRetries = opts.maxRetries ?? 2;
  const defaultDeadline = opts.defaultDeadlineMs ?? 5_000;
  const call = {} as Record<keyof D, (req: unknown, o?: CallOptions) => Promise<unknown>>;
  for (const [key, def] of Object.entries(definition) as [keyof D, D[keyof D]][]) {
    const { service, method } = splitPath(def.path);
    call[key] = async (request, o) => {
      const budget = Math.min(o?.deadlineMs ?? defaultDeadline, remainingMs() ?? Infinity);
      const deadline = Date.now() + Math.max(budget, 0);
      for (let attempt = 0; ; attempt++) {
        const started = process.hrtime.bigint();
        try {
          const res = await unary(client, def, request, deadline, o?.actor);
          opts.metrics.grpcClientDuration.observe({ grpc_service: service, grpc_method: method, grpc_code: 'OK' }, seconds(started));
          return res;
        } catch (e) {
          const err = e as grpc.ServiceError;
          opts.metrics.grpcClientDuration.observe(
            { grpc_service: service, grpc_method: method, grpc_code: grpc.status[err.code] ?? 'UNKNOWN' },
            seconds(started),
          );
          const backoff = 50 * 3 ** attempt;
          const retry = idempotent.has(key) && err.code === grpc.status.UNAVAILABLE && attempt < maxRetries && Date.now() + backoff < deadline;
          if (!retry) throw fromServiceError(err);
          await new Promise((r) => setTimeout(r, backoff));
        }
      }
    };
  }
  return { call: call as unknown as AsyncClient<D>, close: () => client.close() };
}

function unary(client: grpc.Client, def: grpc.MethodDefinition<unknown, unknown>, request: unknown, deadline: number, actor?: string): Promise<unknown> {
  const md = new grpc.Metadata();
  if (actor) md.set(ACTOR_KEY, actor);
  const trace = currentTrace();
  if (trace) md.set('traceparent', formatTraceparent(trace));
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, request, md, { deadline }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
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
 * Rebuilds the AppError a server sent. Transport failures (no code from our server) keep only a
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
    return new AppError(sent as ErrorCode, err.details, {
      errors,
      retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined,
      cause: err,
    });
  }
  const code = BY_STATUS[err.code] ?? 'INTERNAL';
  const detail = code === 'UNAVAILABLE' ? 'An upstream service is unavailable; try again shortly.'
    : code === 'TIMEOUT' ? 'An upstream service did not answer in time.'
    : undefined;
  return new AppError(code, detail, { cause: err });
}
