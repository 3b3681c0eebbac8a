/**
 * What every process reads and sets up alike (log level, NATS, bind host, shutdown budget, gRPC
 * TLS, tracing), kept apart from the service runtime so processes without a database (the
 * gateway) load no database code.
 */
import type { EnvReader } from './config';
import { type GrpcTlsConfig, readGrpcTlsConfig } from './grpc/tls';
import type { Lifecycle } from './lifecycle';
import { LOG_LEVELS, type Logger } from './logger';
import { type Tracing, type TracingConfig, readTracingConfig, setupTracing } from './trace';

export interface RuntimeConfig {
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly natsUrl: string | undefined;
  readonly bindHost: string;
  readonly shutdownTimeoutMs: number;
  readonly grpcTls: GrpcTlsConfig;
  readonly tracing: TracingConfig;
}

/** `<SERVICE>_METRICS_PORT`: the service's ops HTTP port (0 = none). */
export function readMetricsPort(e: EnvReader, service: string): number {
  return e.port(`${service.toUpperCase()}_METRICS_PORT`, { default: 0, allowZero: true });
}

/** Variables every process reads. */
export function readRuntimeConfig(e: EnvReader): RuntimeConfig {
  return {
    logLevel: e.oneOf('LOG_LEVEL', LOG_LEVELS, { default: 'info' }),
    natsUrl: e.optionalUrl('NATS_URL', ['nats', 'tls']),
    bindHost: e.string('BIND_HOST', { default: '0.0.0.0' }),
    shutdownTimeoutMs: e.int('SHUTDOWN_TIMEOUT_MS', { default: 10_000, min: 100, max: 600_000 }),
    grpcTls: readGrpcTlsConfig(e),
    tracing: readTracingConfig(e),
  };
}

/**
 * Sets up the process's one tracer provider (see setupTracing) and flushes it as the last step of
 * the shutdown: call right after creating the lifecycle, before anything else registers.
 */
export function startTracing(config: TracingConfig, deps: { serviceName: string; logger: Logger; lifecycle: Lifecycle }): Tracing {
  const tracing = setupTracing(config, { serviceName: deps.serviceName, logger: deps.logger });
  deps.lifecycle.onShutdown('tracing', () => tracing.shutdown());
  return tracing;
}

