/**
 * The bootstrap every service shares: database (migrated, or checked to be), outbox relay, gRPC
 * server with health, durable consumers, readiness, and shutdown in the right order. A service is
 * ready when its own database answers (plus the service's own checks, e.g. identity's signing
 * key); NATS is reported (health detail, `nats_connected`, the outbox backlog) but never makes it
 * unready: the outbox holds events and consumers reconnect by themselves. A service describes itself with
 * a ServiceSpec; a composition root (the service's own main, or the all-in-one process) provides
 * the runtime: logger, metrics, event bus and lifecycle. Metrics are the service's own (one
 * registry per service, also in the all-in-one process), served only on its ops port.
 */
import type * as grpc from '@grpc/grpc-js';
import type { StreamSpec } from '@iam/contracts';
import type { DataSource, EntitySchema, MixedList } from 'typeorm';
import { type DurableConsumerSpec, type EventBus, type EventHandler, type Subscription, busCheck } from './bus/port';
import { EnvReader, type Env, readConfig } from './config';
import { grantRuntimeRole, openDatabase, pingDatabase } from './db';
import { type GrpcConnectionAge, GrpcHealth, type ServiceBinding, startGrpcServer } from './grpc/server';
import { grpcCredentials } from './grpc/tls';
import { HealthMonitor } from './health';
import { JetStreamEventBus } from './bus/jetstream';
import { Lifecycle, exitOnStartupError } from './lifecycle';
import { createLogger, type Logger } from './logger';
import { createMetrics, type Metrics } from './metrics';
import { startOpsServer } from './ops-server';
import { BatchLoop } from './batch-loop';
import { OutboxRelay } from './outbox';
import { readMetricsPort, readRuntimeConfig, startTracing } from './runtime';

export interface ServiceRuntime {
  readonly logger: Logger;
  /** This service's own metrics (never shared with the gateway: its /metrics is public). */
  readonly metrics: Metrics;
  readonly bus: EventBus;
  readonly lifecycle: Lifecycle;
  /** Interface the gRPC server binds to. */
  readonly bindHost: string;
  /** The key call assertions are signed and verified with (INTERNAL_CALL_KEY; grpc/assertion.ts). */
  readonly callKey: Buffer;
  /** TLS for the gRPC listeners and the channels to other services (plaintext when absent). */
  readonly grpcServerCredentials?: grpc.ServerCredentials;
  /** With mutual TLS: the DNS name each calling component's certificate carries (GRPC_TLS_PEER_NAMES). */
  readonly grpcPeerNames?: Readonly<Record<string, string>>;
  readonly grpcClientCredentials?: grpc.ChannelCredentials;
  /** Port of the service's ops HTTP listener (/health/*, /metrics) on `bindHost`; 0 or absent: none. */
  readonly metricsPort?: number;
  /** Recycling of the gRPC server's connections (default DEFAULT_CONNECTION_AGE). */
  readonly grpcConnectionAge?: GrpcConnectionAge;
  /**
   * Also serve the service's gRPC services in this process under this name (target
   * `in-process:<name>`, grpc/in-process.ts): the all-in-one process only (DESIGN §1).
   */
  readonly inProcessName?: string;
  /**
   * Run pending migrations at start (default true: make run, tests). false: refuse to start on a
   * schema that lacks a migration (SchemaBehindError); `<service> migrate` runs them.
   */
  readonly migrate?: boolean;
  /**
   * Migrate as another role first, as `<service> migrate` does (make run): with the owner's URL,
   * granting the runtime role (the user of the spec's URL) DML and running the service's
   * afterMigrate; the service then connects as the runtime role and only checks the schema.
   */
  readonly migrateAs?: { readonly ownerUrl: string; readonly runtimeRole: string; readonly env: Env };
}

/** A service's own step after its migrations and the runtime grants, as the migrating role. */
export type AfterMigrate = (ds: DataSource, ctx: { runtimeRole?: string; env: Env; logger: Logger }) => Promise<void>;

export interface ServiceContext {
  readonly dataSource: DataSource;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly lifecycle: Lifecycle;
}

export interface ServiceParts {
  readonly grpc: readonly ServiceBinding[];
  readonly consumers?: readonly DurableConsumerSpec[];
  /** Broadcast subscriptions (every replica gets every event). */
  readonly broadcasts?: ReadonlyArray<{ subjects: readonly string[]; handler: EventHandler; /** Whether events arrive or may be missed (a cache flushes then). */ onLive?: (live: boolean) => void }>;
  /** Extra readiness checks beyond the database (identity: a signing key is loaded). */
  readonly checks?: Record<string, () => Promise<void>>;
  /** Called at shutdown after gRPC stopped and before the database closes. */
  readonly stop?: () => Promise<void>;
  /**
   * Removes records that can no longer matter (expired tokens, old idempotency keys): at start,
   * then every HOUSEKEEPING_INTERVAL_MS, on a BatchLoop (a failed run is retried with its backoff).
   */
  readonly housekeeping?: () => Promise<void>;
}

/** How often a service's housekeeping runs (every replica runs it; the deletes are idempotent). */
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

export interface ServiceSpec {
  /** `identity`, `directory`, `notification`. */
  readonly name: string;
  readonly databaseUrl: string;
  readonly grpcPort: number;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type
  readonly entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type
  readonly migrations: MixedList<Function | string>;
  /** Streams this service publishes to or consumes from. */
  readonly streams: readonly StreamSpec[];
  readonly build: (ctx: ServiceContext) => Promise<ServiceParts> | ServiceParts;
  /** Narrower grants or settings only the owner may write (`migrate` and migrateAs run it). */
  readonly afterMigrate?: AfterMigrate;
}

export interface RunningService {
  readonly name: string;
  readonly grpcPort: number;
  /** Where it answers in this process (`in-process:<name>`), when it does. */
  readonly inProcessTarget?: string;
  readonly health: HealthMonitor;
  readonly dataSource: DataSource;
  readonly relay: OutboxRelay;
  readonly metrics: Metrics;
  /** Port of the ops HTTP listener, when there is one. */
  readonly metricsPort?: number;
}

export async function startService(spec: ServiceSpec, rt: ServiceRuntime): Promise<RunningService> {
  const logger = rt.logger.child({ component: spec.name });
  if (rt.migrateAs) {
    const { ownerUrl, runtimeRole, env } = rt.migrateAs;
    await migrateDatabase({ ...spec, url: ownerUrl, runtimeRole, env, logger });
  }
  const dataSource = await openDatabase({
    url: spec.databaseUrl,
    name: spec.name,
    entities: spec.entities,
    migrations: spec.migrations,
    logger,
    migrate: rt.migrateAs ? false : (rt.migrate ?? true),
  });
  rt.lifecycle.onShutdown(`${spec.name} database`, () => dataSource.destroy());

  // Declared in the background: with NATS down the service still starts (and is ready) and the
  // JetStream adapter declares them again once it connects.
  rt.bus.declareStreams(spec.streams).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'declaring streams failed; will retry on reconnect'));

  const ctx: ServiceContext = { dataSource, bus: rt.bus, logger, metrics: rt.metrics, lifecycle: rt.lifecycle };
  const parts = await spec.build(ctx);

  const relay = new OutboxRelay({ dataSource, databaseUrl: spec.databaseUrl, bus: rt.bus, logger, metrics: rt.metrics, service: spec.name });
  relay.start();
  rt.lifecycle.onShutdown(`${spec.name} outbox relay`, () => relay.stop());

  if (parts.stop) rt.lifecycle.onShutdown(`${spec.name} components`, parts.stop);
  if (parts.housekeeping) {
    const { housekeeping } = parts;
    const work = async (): Promise<number> => {
      await housekeeping();
      return 0; // nothing claimed: the loop sleeps until the next interval
    };
    const loop = new BatchLoop({ name: `${spec.name} housekeeping`, work, batchSize: 1, pollMs: HOUSEKEEPING_INTERVAL_MS, logger });
    loop.start();
    rt.lifecycle.onShutdown(`${spec.name} housekeeping`, () => loop.stop());
  }

  const subs: Subscription[] = [
    ...(parts.consumers ?? []).map((c) => rt.bus.consume({ metrics: rt.metrics, service: spec.name, ...c })),
    ...(parts.broadcasts ?? []).map((b) => rt.bus.subscribe(b.subjects, b.handler, b.onLive ? { onLive: b.onLive } : undefined)),
  ];
  rt.lifecycle.onShutdown(`${spec.name} consumers`, async () => {
    await Promise.all(subs.map((s) => s.stop()));
  });
  const stopBacklog = watchConsumerBacklog(rt.bus, parts.consumers ?? [], rt.metrics);
  rt.lifecycle.onShutdown(`${spec.name} consumer backlog`, async () => stopBacklog());

  const health = new HealthMonitor({
    logger,
    checks: { db: () => pingDatabase(dataSource), ...parts.checks },
    informational: { bus: busCheck(rt.bus, rt.metrics) },
  });
  health.start();
  rt.lifecycle.onShutdown(`${spec.name} health`, () => health.stop());

  const grpcHealth = new GrpcHealth();
  grpcHealth.follow(health);
  const server = await startGrpcServer({
    host: rt.bindHost,
    port: spec.grpcPort,
    bindings: parts.grpc,
    health: grpcHealth,
    logger,
    credentials: rt.grpcServerCredentials,
    connectionAge: rt.grpcConnectionAge,
    inProcessName: rt.inProcessName,
  });
  rt.lifecycle.onShutdown(`${spec.name} gRPC server`, () => server.shutdown(5_000));

  let metricsPort: number | undefined;
  if (rt.metricsPort) {
    const ops = await startOpsServer({ host: rt.bindHost, port: rt.metricsPort, health, metrics: rt.metrics, logger, detail: () => ({ outbox: relay.backlog() }) });
    rt.lifecycle.onShutdown(`${spec.name} ops server`, () => ops.close());
    metricsPort = ops.port;
  }

  return { name: spec.name, grpcPort: server.port, ...(server.inProcessTarget ? { inProcessTarget: server.inProcessTarget } : {}), health, dataSource, relay, metrics: rt.metrics, metricsPort };
}

// ---------------------------------------------------------------------------
// Running one service as its own process (production: one per container)

export interface StandaloneOptions<C> {
  readonly name: string;
  /** Reads the service's own variables (its database URL is required here: there is no embedded default). */
  readonly readConfig: (e: EnvReader) => C;
  readonly spec: (config: C, rt: ServiceRuntime) => ServiceSpec;
  readonly env?: Env;
}

/** Main of a service process: config, runtime over NATS JetStream, the service, an ops HTTP port, signals. */
export async function runStandalone<C>(opts: StandaloneOptions<C>): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = readConfig(opts.env ?? process.env, (e) => {
      const runtime = readRuntimeConfig(e, {}, { callKeyRequired: true });
      if (!runtime.natsUrl) e.problem('NATS_URL', 'is required when a service runs as its own process');
      return {
        runtime,
        metricsPort: readMetricsPort(e, opts.name),
        migrateOnStart: e.bool('MIGRATE_ON_START', { default: false }),
        service: opts.readConfig(e),
      };
    });
    logger = createLogger({ level: config.runtime.logLevel, service: opts.name });
    const metrics = createMetrics();
    const lifecycle = new Lifecycle(logger, config.runtime.shutdownTimeoutMs);
    startTracing(config.runtime.tracing, { serviceName: opts.name, logger, lifecycle });
    const bus = new JetStreamEventBus({ url: config.runtime.natsUrl!, name: opts.name, logger, metrics, connection: config.runtime.nats });
    lifecycle.onShutdown('event bus', () => bus.close());
    const creds = grpcCredentials(config.runtime.grpcTls);
    const rt: ServiceRuntime = {
      logger,
      metrics,
      bus,
      lifecycle,
      bindHost: config.runtime.bindHost,
      callKey: config.runtime.callKey!,
      grpcServerCredentials: creds.server,
      grpcPeerNames: config.runtime.grpcTls.peerNames,
      grpcClientCredentials: creds.client,
      metricsPort: config.metricsPort,
      grpcConnectionAge: config.runtime.grpcConnectionAge,
      migrate: config.migrateOnStart,
    };
    lifecycle.installSignalHandlers();
    const running = await startService(opts.spec(config.service, rt), rt);
    logger.info({ grpcPort: running.grpcPort }, `${opts.name} started`);
  } catch (err) {
    exitOnStartupError(err, logger);
  }
}

/**
 * `node services/<name>/dist/main.js migrate`: runs the pending migrations of `<NAME>_DATABASE_URL`
 * (a role that may change the schema; the database is created when missing and the role may),
 * then, with `<NAME>_DATABASE_RUNTIME_ROLE`, grants that role DML only. Needs no other variable.
 * Returns the exit code: 0 done, 1 failed, 2 bad configuration.
 */
export async function runMigrate(opts: {
  readonly name: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type
  readonly entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type
  readonly migrations: MixedList<Function | string>;
  readonly env?: Env;
  /**
   * The service's own step after the migrations and the runtime grants, as the migrating role:
   * narrower grants for some tables, settings the runtime role may read but not change.
   */
  readonly afterMigrate?: AfterMigrate;
}): Promise<number> {
  const prefix = opts.name.toUpperCase();
  let config: { url: string; runtimeRole: string | undefined; logLevel: RuntimeLogLevel };
  try {
    config = readConfig(opts.env ?? process.env, (e) => ({
      url: e.url(`${prefix}_DATABASE_URL`, ['postgres', 'postgresql']),
      runtimeRole: e.optionalString(`${prefix}_DATABASE_RUNTIME_ROLE`),
      logLevel: readRuntimeConfig(e).logLevel,
    }));
  } catch (err) {
    process.stderr.write(`${opts.name} migrate: ${(err as Error).message}\n`);
    return 2;
  }
  const logger = createLogger({ level: config.logLevel, service: opts.name });
  try {
    await migrateDatabase({ ...opts, url: config.url, runtimeRole: config.runtimeRole, env: opts.env ?? process.env, logger });
    logger.info(`${opts.name} database migrated`);
    return 0;
  } catch (err) {
    logger.error({ err }, `${opts.name} migrate failed`);
    return 1;
  }
}

type RuntimeLogLevel = ReturnType<typeof readRuntimeConfig>['logLevel'];

/**
 * The migration step itself: pending migrations with `url` (a role that may change the schema),
 * then, given a runtime role, its DML grants and the service's afterMigrate.
 */
async function migrateDatabase(o: {
  readonly name: string;
  readonly url: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type
  readonly entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type
  readonly migrations: MixedList<Function | string>;
  readonly runtimeRole?: string;
  readonly afterMigrate?: AfterMigrate;
  readonly env: Env;
  readonly logger: Logger;
}): Promise<void> {
  const ds = await openDatabase({ url: o.url, name: o.name, entities: o.entities, migrations: o.migrations, logger: o.logger, migrate: true });
  try {
    if (o.runtimeRole) await grantRuntimeRole(ds, o.runtimeRole, o.logger);
    await o.afterMigrate?.(ds, { runtimeRole: o.runtimeRole, env: o.env, logger: o.logger });
  } finally {
    await ds.destroy();
  }
}

export { EnvReader };

/** How often each durable consumer's backlog is measured (ms). */
export const CONSUMER_BACKLOG_INTERVAL_MS = 5_000;

/** Keeps `events_consumer_backlog{consumer}` current for these consumers; returns the stop. */
export function watchConsumerBacklog(bus: EventBus, consumers: readonly Pick<DurableConsumerSpec, 'name' | 'stream'>[], metrics: Metrics, intervalMs = CONSUMER_BACKLOG_INTERVAL_MS): () => void {
  if (consumers.length === 0) return () => undefined;
  let measuring = false;
  const measure = async () => {
    if (measuring) return;
    measuring = true;
    try {
      for (const c of consumers) {
        // Unknown while the broker is unreachable: the gauge keeps its last value (NATS's own alert covers that).
        const backlog = await bus.consumerBacklog(c).catch(() => undefined);
        if (backlog !== undefined) metrics.consumerBacklog.set({ consumer: c.name }, backlog);
      }
    } finally {
      measuring = false;
    }
  };
  const timer = setInterval(() => void measure(), intervalMs);
  timer.unref();
  void measure();
  return () => clearInterval(timer);
}
