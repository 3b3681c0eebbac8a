/**
 * One error model for every transport: an AppError carries a code that decides its HTTP status,
 * its gRPC status and its problem+json title, and, for a domain refusal, a namespaced reason
 * (`commerce.insufficient_stock`) that tells refusals of one code apart. Anything that is not an
 * AppError is an internal error: logged with the trace id, answered as a generic 500 / INTERNAL
 * with no message.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';

export const ERROR_CODES = {
  VALIDATION: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, title: 'Validation failed' },
  UNAUTHENTICATED: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, title: 'Unauthorized' },
  FORBIDDEN: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, title: 'Forbidden' },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, title: 'Not Found' },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED, title: 'Method Not Allowed' },
  CONFLICT: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS, title: 'Conflict' },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED, title: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT, title: 'Unsupported Media Type' },
  HEADERS_TOO_LARGE: { http: 431, grpc: GrpcStatus.RESOURCE_EXHAUSTED, title: 'Request Header Fields Too Large' },
  RATE_LIMITED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, title: 'Too Many Requests' },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL, title: 'Internal Server Error' },
  UNIMPLEMENTED: { http: 501, grpc: GrpcStatus.UNIMPLEMENTED, title: 'Not Implemented' },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE, title: 'Service Unavailable' },
  TIMEOUT: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED, title: 'Gateway Timeout' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  /** Path of the offending input, e.g. `body.email` or `query.pageSize`. */
  field: string;
  message: string;
}

/**
 * Which refusal a domain error is, namespaced by the context that refuses:
 * `<context>.<snake_case>` (`commerce.insufficient_stock`), as Logto's
 * `RequestError('guard.invalid_input')`. The code stays the kind of failure (CONFLICT: 409,
 * ALREADY_EXISTS); the reason travels beside it (gRPC metadata) and each edge maps the reasons
 * its callers tell apart in one place.
 */
export type ErrorReason = `${string}.${string}`;

const REASON_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** Whether `s` is a well-formed reason (`context.snake_case`). */
export function isErrorReason(s: string): s is ErrorReason {
  return REASON_RE.test(s);
}

export interface AppErrorOptions {
  /** A domain refusal's reason. */
  reason?: ErrorReason;
  errors?: readonly FieldError[];
  /** Seconds, for RATE_LIMITED (Retry-After). */
  retryAfter?: number;
  cause?: unknown;
}

/** An error whose code, detail and field errors are safe to show to the caller. */
export class AppError extends Error {
  readonly reason: ErrorReason | undefined;
  readonly errors: readonly FieldError[] | undefined;
  readonly retryAfter: number | undefined;

  constructor(
    readonly code: ErrorCode,
    /** Human-readable, caller-facing explanation (never an internal message). */
    readonly detail?: string,
    opts: AppErrorOptions = {},
  ) {
    super(detail ?? ERROR_CODES[code].title, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.reason = opts.reason;
    this.errors = opts.errors && opts.errors.length > 0 ? opts.errors : undefined;
    this.retryAfter = opts.retryAfter;
  }

  /** The same error (code, detail, reason, Retry-After, cause) with other field errors. */
  withFieldErrors(errors: readonly FieldError[]): AppError {
    return new AppError(this.code, this.detail, { reason: this.reason, errors, retryAfter: this.retryAfter, cause: this.cause });
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  get grpcCode(): GrpcStatus {
    return ERROR_CODES[this.code].grpc;
  }

  get title(): string {
    return ERROR_CODES[this.code].title;
  }

  static validation(detail: string, errors?: readonly FieldError[]): AppError {
    return new AppError('VALIDATION', detail, { errors });
  }

  static notFound(detail = 'The resource does not exist.'): AppError {
    return new AppError('NOT_FOUND', detail);
  }

  static conflict(detail: string, errors?: readonly FieldError[]): AppError {
    return new AppError('CONFLICT', detail, { errors });
  }

  static unauthenticated(detail = 'Authentication is required.'): AppError {
    return new AppError('UNAUTHENTICATED', detail);
  }

  static forbidden(detail = 'You do not have permission to do this.'): AppError {
    return new AppError('FORBIDDEN', detail);
  }

  static unavailable(detail = 'A dependency is unavailable; try again shortly.', cause?: unknown): AppError {
    return new AppError('UNAVAILABLE', detail, { cause });
  }

  static rateLimited(retryAfter: number, detail = 'Too many requests; try again later.'): AppError {
    return new AppError('RATE_LIMITED', detail, { retryAfter });
  }
}

/** RFC 9457 problem details, as every HTTP error leaves the gateway. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance: string;
  traceId: string;
  errors?: FieldError[];
}

export function problemType(code: ErrorCode): string {
  return `urn:iam:problem:${code.toLowerCase().replace(/_/g, '-')}`;
}

export function toProblem(err: AppError, ctx: { instance: string; traceId: string }): Problem {
  const p: Problem = {
    type: problemType(err.code),
    title: err.title,
    status: err.httpStatus,
    instance: ctx.instance,
    traceId: ctx.traceId,
  };
  if (err.detail) p.detail = err.detail;
  if (err.errors) p.errors = [...err.errors];
  return p;
}

/**
 * Seconds a caller is told to wait (Retry-After, RFC 9110 §10.2.3) after a 503 or 504 that names
 * no time of its own: long enough for a database or a service restarting to be back, short
 * enough that a client retrying does not stay away longer than the outage.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** The Retry-After of an error, in whole seconds: its own, else the default for a 503 or 504; none for the rest. */
export function retryAfterOf(err: AppError): number | undefined {
  const s = err.retryAfter ?? (err.httpStatus === 503 || err.httpStatus === 504 ? UNAVAILABLE_RETRY_AFTER_SECONDS : undefined);
  return s === undefined ? undefined : Math.max(1, Math.ceil(s));
}

/** The error that leaves for anything unexpected: no message, no stack. */
export function internalError(cause?: unknown): AppError {
  return new AppError('INTERNAL', 'An unexpected error occurred.', { cause });
}

/** The code of a query that had no answer before its request's deadline (db/query-deadline.ts): its connection was closed. */
export const QUERY_DEADLINE_CODE = 'IAM_QUERY_DEADLINE';

/** Socket errors, and PostgreSQL codes outside the classes below that still mean "not now" (53300: too many connections). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '53300', QUERY_DEADLINE_CODE]);
/**
 * PostgreSQL SQLSTATE classes of a database that cannot serve now: 08 (connection exception:
 * 08000, 08001, 08003, 08004, 08006, 08007, 08P01) and 57P (operator intervention: 57P01 admin
 * shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 57P04 database dropped, 57P05 idle
 * session timeout).
 */
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P[0-9A-Z]{2})$/;
/**
 * 55000 (object not in prerequisite state) means "not now" only when the server refuses the
 * connection: a database with ALLOW_CONNECTIONS false ("database … is not currently accepting
 * connections", raised while the session starts). Elsewhere 55000 is a real error (a sequence's
 * currval before nextval, …).
 */
const REFUSED_AT_CONNECT = /is not currently accepting connections/i;
// The last: TypeORM's QueryRunnerProviderAlreadyReleasedError ("... query runner was already
// released") and QueryRunnerAlreadyReleasedError ("Query runner already released ..."), when the
// pool dropped a broken connection mid-use (a transaction's next statement after a restart).
const UNREACHABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|connection error|Connection refused|query runner (was )?already released/i;
/**
 * Whether `err` (or what it wraps: TypeORM's driverError, a cause) says a dependency cannot be
 * reached right now — a database restarting, refusing connections, or a refused or dropped
 * connection: the caller should get 503 and try again, not a 500. The one place that decides it
 * (the gRPC server maps it to UNAVAILABLE). No driver is imported: codes and messages only.
 */
export function isDependencyUnreachable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const x = e as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof x.code === 'string' && (UNREACHABLE_CODES.has(x.code) || UNREACHABLE_SQLSTATE.test(x.code))) return true;
    if (x.code === '55000' && typeof x.message === 'string' && REFUSED_AT_CONNECT.test(x.message)) return true;
    if (typeof x.message === 'string' && UNREACHABLE_MESSAGES.test(x.message)) return true;
    e = x.driverError ?? x.cause;
  }
  return false;
}

/**
 * Whether a failure may pass if tried again later: a dependency unreachable or overloaded, a
 * deadline passed. Anything else (a refusal, a bug) will fail the same way every time: work that
 * meets it is dead-lettered at once rather than retried.
 */
export function isTransientFailure(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'UNAVAILABLE' || err.code === 'TIMEOUT' || err.code === 'RATE_LIMITED';
  return isDependencyUnreachable(err);
}
