/**
 * Tracing on OpenTelemetry. Each process sets up one tracer provider (`setupTracing`, called by
 * its composition root); the platform's transports make the spans: HTTP routes (gateway), gRPC
 * client and server, PostgreSQL queries, event publish and consume. W3C `traceparent` crosses
 * HTTP headers, gRPC metadata, NATS headers and the outbox row. Spans are exported over OTLP/HTTP
 * only when an endpoint is configured; without one, ids are still made and propagated (logs and
 * X-Trace-Id carry them) but nothing is recorded.
 *
 * Besides the span, the active context carries the deadline of the work in progress (set by the
 * gRPC server from the caller's deadline), which outgoing gRPC calls respect.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Attributes,
  type Context,
  DiagLogLevel,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  context,
  createContextKey,
  diag,
  isSpanContextValid,
  propagation,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { OTLPTraceExporter as OtlpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  type IdGenerator,
  NodeTracerProvider,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { EnvReader } from './config';
import type { Logger } from './logger';

export { type Context, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';

// ---------------------------------------------------------------------------
// Configuration

export const TRACE_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;

export interface TracingConfig {
  /** Full OTLP/HTTP traces URL (…/v1/traces); undefined: nothing is exported. */
  readonly otlpTracesUrl: string | undefined;
  /** Extra headers of the export requests (e.g. a collector's API key). */
  readonly otlpHeaders: Readonly<Record<string, string>>;
  /** `service.name` of the spans; default: the process's own name. */
  readonly serviceName: string | undefined;
  /** `service.version` of the spans (SERVICE_VERSION); default: the release's, {@link RELEASE_VERSION}. */
  readonly serviceVersion: string | undefined;
  /** `deployment.environment.name` (and the older `deployment.environment`) of the spans, e.g. production; unset: none. */
  readonly environment: string | undefined;
  /** Used only when exporting (OTel's names and meaning). */
  readonly sampler: (typeof TRACE_SAMPLERS)[number];
  /** Ratio for the `*traceidratio` samplers, 0..1. */
  readonly samplerRatio: number;
}

/**
 * The version of this release: every workspace is released together at one version (the image
 * holds them all), so the platform package's is every process's.
 */
export const RELEASE_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();

/**
 * The standard OTel variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (full URL) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (base; `/v1/traces` is appended), `OTEL_EXPORTER_OTLP_HEADERS`
 * (`k=v,k2=v2`), `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`; and the
 * resource's `SERVICE_VERSION` (e.g. an image's build) and `DEPLOYMENT_ENVIRONMENT`.
 */
export function readTracingConfig(e: EnvReader): TracingConfig {
  const traces = e.optionalUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http', 'https']);
  const base = e.optionalUrl('OTEL_EXPORTER_OTLP_ENDPOINT', ['http', 'https']);
  const otlpTracesUrl = traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  const otlpHeaders: Record<string, string> = {};
  for (const item of (e.optionalString('OTEL_EXPORTER_OTLP_HEADERS') ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const i = item.indexOf('=');
    if (i <= 0) {
      e.problem('OTEL_EXPORTER_OTLP_HEADERS', 'must be a comma list of key=value');
      break;
    }
    try {
      otlpHeaders[decodeURIComponent(item.slice(0, i).trim())] = decodeURIComponent(item.slice(i + 1).trim());
    } catch {
      e.problem('OTEL_EXPORTER_OTLP_HEADERS', 'has a badly percent-encoded item');
      break;
    }
  }
  const sampler = e.oneOf('OTEL_TRACES_SAMPLER', TRACE_SAMPLERS, { default: 'parentbased_always_on' });
  const arg = e.optionalString('OTEL_TRACES_SAMPLER_ARG');
  let samplerRatio = 1;
  if (arg !== undefined) {
    const n = Number(arg);
    if (!/^\d*\.?\d+$/.test(arg) || !(n >= 0 && n <= 1)) e.problem('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1 (got "${arg.slice(0, 40)}")`);
    else samplerRatio = n;
  }
  return {
    otlpTracesUrl,
    otlpHeaders,
    serviceName: e.optionalString('OTEL_SERVICE_NAME'),
    serviceVersion: e.optionalString('SERVICE_VERSION'),
    environment: e.optionalString('DEPLOYMENT_ENVIRONMENT'),
    sampler,
    samplerRatio,
  };
}

/** Nothing exported (tests, and processes set up before their config is read). */
export const NO_TRACE_EXPORT: TracingConfig = Object.freeze({
  otlpTracesUrl: undefined,
  otlpHeaders: Object.freeze({}),
  serviceName: undefined,
  serviceVersion: undefined,
  environment: undefined,
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
});

// ---------------------------------------------------------------------------
// The process's tracer provider

export interface TracingOptions {
  /** `service.name` (unless OTEL_SERVICE_NAME says otherwise): `gateway`, `identity`, …, `iam` for the all-in-one process. */
  readonly serviceName: string;
  /** Receives the SDK's own warnings and errors (e.g. a failed export). */
  readonly logger?: Logger;
  /** More exporters, each behind a SimpleSpanProcessor (tests: an InMemorySpanExporter). */
  readonly exporters?: readonly SpanExporter[];
}

export interface Tracing {
  /** Exports what is buffered. */
  forceFlush(): Promise<void>;
  /** Exports what is buffered and stops exporting (last step of a graceful shutdown). */
  shutdown(): Promise<void>;
}

/** A root span started in a context holding this key takes it as its trace id (X-Trace-Id). */
const REQUESTED_TRACE_ID = createContextKey('iam.requested-trace-id');
/** Absolute deadline (ms since epoch) of the work in progress. */
const DEADLINE = createContextKey('iam.deadline');

class ContinuingIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  generateTraceId = (): string => (context.active().getValue(REQUESTED_TRACE_ID) as string | undefined) ?? this.random.generateTraceId();
  generateSpanId = (): string => this.random.generateSpanId();
}

let installed: { provider: NodeTracerProvider; tracer: Tracer } | undefined;

/**
 * Installs this process's tracer provider, context manager (AsyncLocalStorage) and W3C
 * propagator. Call once per process, before anything starts; a second call replaces the
 * provider (tests), shutting the previous one down.
 */
export function setupTracing(config: TracingConfig, opts: TracingOptions): Tracing {
  const processors: SpanProcessor[] = [];
  if (config.otlpTracesUrl) {
    // Loaded only when a collector is configured: the exporter and its dependencies cost about
    // 160 ms of start-up (measured) to every process that exports nothing.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy, see above
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as { OTLPTraceExporter: typeof OtlpTraceExporter };
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpTracesUrl, headers: { ...config.otlpHeaders } })));
  }
  for (const exporter of opts.exporters ?? []) processors.push(new SimpleSpanProcessor(exporter));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes(resourceAttributes(config, opts.serviceName)),
    sampler: processors.length > 0 ? samplerOf(config) : new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    idGenerator: new ContinuingIdGenerator(),
    spanProcessors: processors,
  });
  const previous = installed;
  if (previous) {
    trace.disable();
    provider.register({ contextManager: null, propagator: null });
    void previous.provider.shutdown().catch(() => undefined);
  } else {
    provider.register({ propagator: new W3CTraceContextPropagator() });
  }
  installed = { provider, tracer: provider.getTracer('@iam/platform') };
  if (opts.logger) {
    const log = opts.logger.child({ component: 'opentelemetry' });
    const warn = (msg: string, ...args: unknown[]): void => log.warn({ detail: describeDiag(args) }, `tracing: ${describeDiag([msg])}`);
    diag.setLogger(
      { error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  }
  return {
    forceFlush: () => provider.forceFlush(),
    // Bounded: a collector that is down must not hold the process's exit.
    shutdown: () => Promise.race([provider.shutdown(), new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref())]),
  };
}

/** What every span of the process carries: its service's name and version, the deployment's environment. */
function resourceAttributes(config: TracingConfig, serviceName: string): Attributes {
  return {
    [ATTR_SERVICE_NAME]: config.serviceName ?? serviceName,
    [ATTR_SERVICE_VERSION]: config.serviceVersion ?? RELEASE_VERSION,
    // The current name, and the one most backends still group by (deprecated in semconv 1.27).
    ...(config.environment ? { 'deployment.environment.name': config.environment, 'deployment.environment': config.environment } : {}),
  };
}

/** How long the last export may take at shutdown. */
const SHUTDOWN_FLUSH_MS = 3_000;

/** One short line from what the SDK reports (often a serialized error with its stack). */
function describeDiag(args: readonly unknown[]): string {
  return args
    .map((a) => {
      if (a instanceof Error) return a.message;
      const text = typeof a === 'string' ? a : JSON.stringify(a) ?? String(a);
      try {
        const parsed = JSON.parse(text) as { message?: unknown };
        if (parsed && typeof parsed.message === 'string') return parsed.message;
      } catch {
        // not JSON: the text itself
      }
      return text;
    })
    .join(' ')
    .split('\n')[0]!
    .slice(0, 300);
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The platform's tracer. A process that did not call setupTracing (unit tests) gets a provider
 * that exports nothing, so ids are still made and propagated.
 */
export function tracer(): Tracer {
  if (!installed) setupTracing(NO_TRACE_EXPORT, { serviceName: 'iam' });
  return installed!.tracer;
}

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
