/**
 * What every process reads and sets up alike (log level, NATS, bind host, shutdown budget, gRPC
 * TLS, tracing), kept apart from the service runtime so processes without a database (the
 * gateway) load no database code.
 */
import { readFileSync } from 'node:fs';
import type { EnvReader } from './config';
import type { GrpcConnectionAge } from './grpc/server';
import { type GrpcTlsConfig, readGrpcTlsConfig } from './grpc/tls';
import type { Lifecycle } from './lifecycle';
import { LOG_LEVELS, type Logger } from './logger';
import { type Tracing, setupTracing } from './tracing';
import { type TracingConfig, readTracingConfig } from './tracing-config';

/**
 * How to reach NATS beyond its URL: credentials read from files (a mounted Secret, never plain
 * env), a CA for tls://, and the replica count of the streams the services declare.
 */
export interface NatsConnectionConfig {
  /** NATS_STREAM_REPLICAS (default 1; 3 on a NATS cluster). */
  readonly streamReplicas: number;
  /** NATS_CREDS_FILE: a .creds file (user JWT and nkey seed). */
  readonly creds?: Uint8Array;
  /** NATS_NKEY_SEED_FILE: an nkey seed. */
  readonly nkeySeed?: Uint8Array;
  /** NATS_USER_FILE / NATS_PASSWORD_FILE. */
  readonly user?: string;
  readonly password?: string;
  /** NATS_CA_FILE: trust anchor (PEM) of a tls:// server. */
  readonly caFile?: string;
}

export interface RuntimeConfig {
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly natsUrl: string | undefined;
  readonly nats: NatsConnectionConfig;
  readonly bindHost: string;
  readonly shutdownTimeoutMs: number;
  readonly grpcTls: GrpcTlsConfig;
  /** Recycling of the gRPC server's connections (services; the gateway has no gRPC server). */
  readonly grpcConnectionAge: GrpcConnectionAge;
  readonly tracing: TracingConfig;
  /**
   * INTERNAL_CALL_KEY: the key every process signs and verifies its gRPC call assertions with
   * (grpc/assertion.ts), shared by the platform's processes only. Required where processes are
   * separate (each standalone process asks for it); the all-in-one process makes one at start.
   */
  readonly callKey: Buffer | undefined;
}

/** `<SERVICE>_METRICS_PORT`: the service's ops HTTP port (0 = none). */
export function readMetricsPort(e: EnvReader, service: string): number {
  return e.port(`${service.toUpperCase()}_METRICS_PORT`, { default: 0, allowZero: true });
}

/**
 * Variables every process reads. `defaults.grpcMaxConnectionAgeMs`: the all-in-one process has one
 * server per service and nothing to balance, so it recycles no connections unless told to
 * (a recycle under load ends calls that race the GOAWAY: INTERNAL "RST_STREAM with code 0").
 */
export function readRuntimeConfig(e: EnvReader, defaults: { grpcMaxConnectionAgeMs?: number; bindHost?: string } = {}, opts: { callKeyRequired?: boolean } = {}): RuntimeConfig {
  return {
    logLevel: e.oneOf('LOG_LEVEL', LOG_LEVELS, { default: 'info' }),
    natsUrl: e.optionalUrl('NATS_URL', ['nats', 'tls']),
    nats: readNatsConnectionConfig(e),
    bindHost: e.string('BIND_HOST', { default: defaults.bindHost ?? '0.0.0.0' }),
    shutdownTimeoutMs: e.int('SHUTDOWN_TIMEOUT_MS', { default: 10_000, min: 100, max: 600_000 }),
    grpcTls: readGrpcTlsConfig(e),
    grpcConnectionAge: {
      maxAgeMs: e.int('GRPC_MAX_CONNECTION_AGE_MS', { default: defaults.grpcMaxConnectionAgeMs ?? 60_000, min: 0, max: 24 * 3600_000 }),
      graceMs: e.int('GRPC_MAX_CONNECTION_AGE_GRACE_MS', { default: 15_000, min: 0, max: 3600_000 }),
    },
    tracing: readTracingConfig(e),
    callKey: e.key('INTERNAL_CALL_KEY', { required: opts.callKeyRequired ?? false }),
  };
}

function readNatsConnectionConfig(e: EnvReader): NatsConnectionConfig {
  const file = (name: string): Buffer | undefined => {
    const path = e.optionalString(name);
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      e.problem(name, `cannot be read (${(err as Error).message})`);
      return undefined;
    }
  };
  const text = (name: string): string | undefined => file(name)?.toString('utf8').trim();
  const caFile = e.optionalString('NATS_CA_FILE');
  if (caFile) file('NATS_CA_FILE');
  return {
    streamReplicas: e.int('NATS_STREAM_REPLICAS', { default: 1, min: 1, max: 5 }),
    creds: file('NATS_CREDS_FILE'),
    nkeySeed: file('NATS_NKEY_SEED_FILE'),
    user: text('NATS_USER_FILE'),
    password: text('NATS_PASSWORD_FILE'),
    caFile,
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

