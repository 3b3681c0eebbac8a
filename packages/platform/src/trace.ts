/**
 * W3C trace context carried through a request: HTTP headers, gRPC metadata and NATS headers.
 * The current context lives in AsyncLocalStorage so loggers and outgoing calls find it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

export interface TraceContext {
  /** 32 lowercase hex characters. */
  readonly traceId: string;
  /** 16 lowercase hex characters: this process's span. */
  readonly spanId: string;
  /** trace-flags of the incoming traceparent (01 = sampled). */
  readonly flags: string;
  /** Absolute deadline (ms since epoch) of the work, propagated to outgoing gRPC calls. */
  readonly deadline?: number;
}

const storage = new AsyncLocalStorage<TraceContext>();

const TRACEPARENT_RE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const TRACE_ID_RE = /^[0-9a-f]{32}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

/** Parses a W3C traceparent; anything malformed (or version ff, or all-zero ids) is null. */
export function parseTraceparent(value: unknown): { traceId: string; parentId: string; flags: string } | null {
  if (typeof value !== 'string' || value.length > 128) return null;
  const m = TRACEPARENT_RE.exec(value.trim());
  if (!m) return null;
  const [, version, traceId, parentId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff' || traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  if (version === '00' && value.trim().length !== 55) return null;
  return { traceId, parentId, flags };
}

/** An X-Trace-Id value: exactly 32 hex characters (case-insensitive), not all zeros. */
export function parseTraceIdHeader(value: unknown): string | null {
  if (typeof value !== 'string' || value.length !== 32) return null;
  const id = value.toLowerCase();
  return TRACE_ID_RE.test(id) && id !== ZERO_TRACE ? id : null;
}

/** Continues the trace named by `traceparent` or `x-trace-id` (in that order), or starts a new one. */
export function traceFromCarrier(get: (name: string) => unknown): TraceContext {
  const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
  const parent = parseTraceparent(first(get('traceparent')));
  if (parent) return { traceId: parent.traceId, spanId: newSpanId(), flags: parent.flags };
  const id = parseTraceIdHeader(first(get('x-trace-id')));
  return { traceId: id ?? newTraceId(), spanId: newSpanId(), flags: '01' };
}

export function formatTraceparent(ctx: TraceContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags}`;
}

export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}

export function runWithTrace<T>(ctx: TraceContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** Milliseconds left before the current deadline, or undefined when there is none. */
export function remainingMs(): number | undefined {
  const d = storage.getStore()?.deadline;
  return d === undefined ? undefined : d - Date.now();
}
