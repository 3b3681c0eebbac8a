/**
 * The process's tracer provider: one per process (`setupTracing`, called by its composition root),
 * exporting over OTLP/HTTP only when an endpoint is configured; without one, ids are still made
 * and propagated (logs and X-Trace-Id carry them) but nothing is recorded.
 */
import {
  type Attributes,
  DiagLogLevel,
  type Tracer,
  context,
  createContextKey,
  diag,
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
import type { Logger } from './logger';
import { NO_TRACE_EXPORT, RELEASE_VERSION, type TracingConfig } from './tracing-config';

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
export const REQUESTED_TRACE_ID = createContextKey('iam.requested-trace-id');

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
