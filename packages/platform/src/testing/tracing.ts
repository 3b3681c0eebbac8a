/**
 * Spans recorded in memory: installs this (test) process's tracer provider with an
 * InMemorySpanExporter, so a test can look at the spans a request made.
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { setupTracing } from '../tracing';
import { NO_TRACE_EXPORT } from '../tracing-config';

export type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface TestTracing {
  readonly exporter: InMemorySpanExporter;
  /** Finished spans, of one trace when `traceId` is given, in the order they ended. */
  spans(traceId?: string): ReadableSpan[];
  reset(): void;
  shutdown(): Promise<void>;
}

export function installTestTracing(serviceName = 'iam-test'): TestTracing {
  const exporter = new InMemorySpanExporter();
  const tracing = setupTracing(NO_TRACE_EXPORT, { serviceName, exporters: [exporter] });
  return {
    exporter,
    spans: (traceId) => exporter.getFinishedSpans().filter((s) => traceId === undefined || s.spanContext().traceId === traceId),
    reset: () => exporter.reset(),
    shutdown: () => tracing.shutdown(),
  };
}

/** The span's parent among `spans`, if it is there. */
export function parentSpan(span: ReadableSpan, spans: readonly ReadableSpan[]): ReadableSpan | undefined {
  const parentId = span.parentSpanContext?.spanId;
  return parentId ? spans.find((s) => s.spanContext().spanId === parentId) : undefined;
}

/** The chain from the root of the trace down to `span`, each the parent of the next. */
export function spanPath(span: ReadableSpan, spans: readonly ReadableSpan[]): ReadableSpan[] {
  const path = [span];
  for (let p = parentSpan(span, spans); p && path.length < 100; p = parentSpan(p, spans)) path.unshift(p);
  return path;
}
