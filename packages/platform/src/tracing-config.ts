/**
 * Tracing configuration: where spans are exported (OTLP/HTTP), how they are sampled, and the
 * resource every span carries (service name and version, deployment environment), read once from
 * the standard OTel variables.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvReader } from './config';

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
