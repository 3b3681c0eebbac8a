/**
 * Tracing on OpenTelemetry: the spans the platform's transports make (HTTP routes in the gateway,
 * gRPC client and server, PostgreSQL queries, event publish and consume) and the W3C
 * `traceparent` that crosses HTTP headers, gRPC metadata, NATS headers and the outbox row. The
 * process's tracer provider is set up in ./tracing.ts, its configuration read in ./tracing-config.ts.
 *
 * Besides the span, the active context carries the deadline of the work in progress (set by the
 * gRPC server from the caller's deadline), which outgoing gRPC calls respect.
 */
import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  trace,
} from '@opentelemetry/api';
import { REQUESTED_TRACE_ID, tracer } from './tracing';

export { type Context, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';

/** Absolute deadline (ms since epoch) of the work in progress. */
const DEADLINE = createContextKey('iam.deadline');

// ---------------------------------------------------------------------------
// Spans for the transports

/** Reads a carrier (headers, metadata) by lowercase name. */
export type CarrierGet = (name: string) => unknown;

const carrierGetter: TextMapGetter<CarrierGet> = {
  get: (carrier, key) => {
    const v = carrier(key);
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.map(String);
    return v instanceof Buffer ? v.toString() : undefined;
  },
  keys: () => [],
};

/**
 * The context a request or message carries: its valid `traceparent` (W3C), else, when
 * `traceIdHeader` is allowed (HTTP), a valid `x-trace-id` becomes the id of the trace the next
 * root span starts; anything malformed is ignored.
 */
export function extractContext(get: CarrierGet, opts: { traceIdHeader?: boolean } = {}): Context {
  tracer();
  const ctx = propagation.extract(ROOT_CONTEXT, get, carrierGetter);
  if (trace.getSpan(ctx) || !opts.traceIdHeader) return ctx;
  const raw = get('x-trace-id');
  const id = parseTraceIdHeader(Array.isArray(raw) ? raw[0] : raw);
  return id ? ctx.setValue(REQUESTED_TRACE_ID, id) : ctx;
}

/** The W3C headers of `ctx` (default: the active context), for an outgoing message or call. */
export function injectContext(set: (name: string, value: string) => void, ctx: Context = context.active()): void {
  propagation.inject(ctx, set, { set: (carrier, key, value) => carrier(key, value) });
}

/** `traceparent` of the active span, if any (stored with outbox events). */
export function activeTraceparent(): string | undefined {
  let tp: string | undefined;
  injectContext((name, value) => {
    if (name === 'traceparent') tp = value;
  });
  return tp;
}

export interface StartedSpan {
  readonly span: Span;
  /** `parent` with the span set: run the work in it. */
  readonly ctx: Context;
}

/** Starts a span under `parent` (default: the active context). */
export function startSpan(name: string, opts: { kind?: SpanKind; attributes?: Attributes }, parent: Context = context.active()): StartedSpan {
  const t = tracer();
  // Active while starting, so a requested trace id reaches the id generator.
  const span = parent.getValue(REQUESTED_TRACE_ID) === undefined ? t.startSpan(name, opts, parent) : context.with(parent, () => t.startSpan(name, opts, parent));
  return { span, ctx: trace.setSpan(parent.deleteValue(REQUESTED_TRACE_ID), span) };
}

/** Runs `fn` with `ctx` active (e.g. the context of a span from startSpan). */
export function runInContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** Runs `fn` in a new span (child of the active one) that ends when it settles; a throw marks it failed. */
export async function withSpan<T>(name: string, opts: { kind?: SpanKind; attributes?: Attributes }, fn: (span: Span) => Promise<T>): Promise<T> {
  const { span, ctx } = startSpan(name, opts);
  try {
    return await context.with(ctx, () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span failed, naming only the error's class (messages may carry data that must not leave). */
export function failSpan(span: Span, err: unknown): void {
  const type = err instanceof Error ? err.name : typeof err;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

// ---------------------------------------------------------------------------
// The active trace and deadline (logs, tests, deadlines)

export interface TraceContext {
  /** 32 lowercase hex characters. */
  readonly traceId: string;
  /** 16 lowercase hex characters: the active span. */
  readonly spanId: string;
  /** trace-flags (01 = sampled). */
  readonly flags: string;
  /** Absolute deadline (ms since epoch) of the work, propagated to outgoing gRPC calls. */
  readonly deadline?: number;
}

/** Ids of the active span, or undefined outside any (the logger's mixin). */
export function activeSpanIds(): { traceId: string; spanId: string } | undefined {
  const sc = trace.getSpanContext(context.active());
  return sc && isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : undefined;
}

/** The active trace: span ids, flags and the deadline of the work. */
export function currentTrace(): TraceContext | undefined {
  const ctx = context.active();
  const sc = trace.getSpanContext(ctx);
  if (!sc || !isSpanContextValid(sc)) return undefined;
  const deadline = ctx.getValue(DEADLINE) as number | undefined;
  return { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags.toString(16).padStart(2, '0'), ...(deadline === undefined ? {} : { deadline }) };
}

/** Runs `fn` as part of the given (remote) trace, with its deadline (tests, replays). */
export function runWithTrace<T>(t: TraceContext, fn: () => T): T {
  tracer();
  let ctx = trace.setSpanContext(context.active(), { traceId: t.traceId, spanId: t.spanId, traceFlags: parseInt(t.flags, 16) || 0, isRemote: true });
  if (t.deadline !== undefined) ctx = ctx.setValue(DEADLINE, t.deadline);
  return context.with(ctx, fn);
}

/** `ctx` with the absolute deadline (ms since epoch) of the work in it. */
export function withDeadline(ctx: Context, deadline: number | undefined): Context {
  return deadline === undefined ? ctx : ctx.setValue(DEADLINE, deadline);
}

/**
 * The HTTP request header that carries a deadline to a service behind the gateway (the OpenID
 * provider): the milliseconds left of it, as gRPC's grpc-timeout. The gateway sets it (replacing a
 * client's value).
 */
export const TIMEOUT_MS_HEADER = 'iam-timeout-ms';

/** Milliseconds left before the current deadline, or undefined when there is none. */
export function remainingMs(): number | undefined {
  const d = context.active().getValue(DEADLINE) as number | undefined;
  return d === undefined ? undefined : d - Date.now();
}

// ---------------------------------------------------------------------------
// Ids outside of spans (a response made before any route runs)

const TRACE_ID_RE = /^[0-9a-f]{32}$/;
const ZERO_TRACE = '0'.repeat(32);

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** An X-Trace-Id value: exactly 32 hex characters (case-insensitive), not all zeros. */
export function parseTraceIdHeader(value: unknown): string | null {
  if (typeof value !== 'string' || value.length !== 32) return null;
  const id = value.toLowerCase();
  return TRACE_ID_RE.test(id) && id !== ZERO_TRACE ? id : null;
}

export function formatTraceparent(t: Pick<TraceContext, 'traceId' | 'spanId' | 'flags'>): string {
  return `00-${t.traceId}-${t.spanId}-${t.flags}`;
}
