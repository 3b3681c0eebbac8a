#!/usr/bin/env node
/**
 * The all-in-one process (`make run`): every service and the gateway in one process, on an
 * embedded PostgreSQL (a database per service, data kept in DATA_DIR) and the in-process event
 * bus. `<SERVICE>_DATABASE_URL` and `NATS_URL` switch any of them to external servers. On the
 * embedded server, as in production, each database is migrated by its owner role and each
 * service runs as its own runtime role (embedded-roles.ts), never as the superuser.
 * This file is the composition root of that process; it selects the in-process transport between
 * the components (DESIGN §1; INTERNAL_TRANSPORT=grpc for loopback gRPC). As in production, the gateway's public
 * /metrics shows only the gateway (and the process); each service has its own metrics, served on
 * its ops port (`<SERVICE>_METRICS_PORT`, loopback, off by default).
 */
import { join, resolve } from 'node:path';
import { readAuditConfig } from '@iam/audit';
import { readCommerceConfig } from '@iam/commerce';
import { readDirectoryConfig } from '@iam/directory';
import { readGatewayConfig } from '@iam/gateway';
import { readIdentityConfig } from '@iam/identity';
import { MemoryMailbox, readNotificationConfig } from '@iam/notification';
import {
  type EventBus,
  InMemoryEventBus,
  JetStreamEventBus,
  Lifecycle,
  type Logger,
  createLogger,
  exitOnStartupError,
  grpcCredentials,
  readConfig,
  readMetricsPort,
  readRuntimeConfig,
  startTracing,
} from '@iam/platform';
import { startEmbeddedPostgres } from '@iam/platform/embedded-postgres';
import { prepareEmbeddedDatabase } from './embedded-roles';
import { embeddedUrls } from './embedded-urls';
import { LOG_FORMATS, defaultLogFormat, logDestination } from './log-format';
import { DEFAULT_PORT, localPorts } from './local-ports';
import { loadOrCreateSecret } from './local-secrets';
import { SERVICES, type ServiceName, startSystem } from './system';

async function main(): Promise<void> {
  const started = Date.now();
  let logger: Logger | undefined;
  let lifecycle: Lifecycle | undefined;
  try {
    // Pass 1: the public port (the other ports follow it) and where the embedded database lives
    // (its URLs are defaults for pass 2).
    const local = readConfig(process.env, (e) => {
      const port = e.port('PORT', { default: DEFAULT_PORT, allowZero: true });
      const ports = localPorts(port);
      return {
        port,
        // The platform's public origin (identity's issuer and console client read it too).
        publicUrl: e.optionalUrl('PUBLIC_URL', ['http', 'https'])?.replace(/\/+$/, ''),
        ports,
        dataDir: resolve(e.string('DATA_DIR', { default: '.data' })),
        embeddedPort: e.port('EMBEDDED_PG_PORT', { default: ports.embeddedPostgres }),
        logFormat: e.oneOf('LOG_FORMAT', LOG_FORMATS, { default: defaultLogFormat() }),
        // How the components call each other: in process (default), or over loopback gRPC (to compare).
        transport: e.oneOf('INTERNAL_TRANSPORT', ['in-process', 'grpc'] as const, { default: 'in-process' }),
      };
    });
    const embedded = { dataDir: local.dataDir, port: local.embeddedPort };
    const urls = embeddedUrls(embedded.dataDir, embedded.port);
    const grpcPort = local.ports.grpc;
    // Mail links point at this process's own hosted pages (/reset-password, /verify-email) unless
    // EMAIL_ACTION_BASE_URL says otherwise: at PUBLIC_URL, else http://localhost:{PORT} (with
    // PORT=0 the port is not known yet: no default).
    const ownOrigin = local.publicUrl ?? (local.port === 0 ? undefined : `http://localhost:${local.port}`);
    // Pass 2: everything else, every problem reported at once. Unlike a container, this process
    // listens on loopback unless HOST / BIND_HOST say otherwise, and on a terminal it logs a short
    // line per request at debug.
    const config = readConfig(process.env, (e) => ({
      runtime: readRuntimeConfig(e, { grpcMaxConnectionAgeMs: 0, bindHost: '127.0.0.1' }),
      gateway: readGatewayConfig(e, { host: '127.0.0.1', requestLogLevel: local.logFormat === 'pretty' ? 'debug' : 'info' }),
      directory: readDirectoryConfig(e, { databaseUrl: urls.url('directory'), grpcPort: grpcPort.directory, emailActionKey: () => loadOrCreateSecret(join(embedded.dataDir, 'secrets', 'email-action-key')) }),
      identity: readIdentityConfig(e, {
        databaseUrl: urls.url('identity'),
        grpcPort: grpcPort.identity,
        opPort: local.ports.identityOp,
        keyEncryptionKey: () => loadOrCreateSecret(join(embedded.dataDir, 'secrets', 'jwt-key-encryption-key')),
        emailActionKey: () => loadOrCreateSecret(join(embedded.dataDir, 'secrets', 'email-action-key')),
      }),
      notification: readNotificationConfig(e, {
        databaseUrl: urls.url('notification'),
        grpcPort: grpcPort.notification,
        emailActionKey: () => loadOrCreateSecret(join(embedded.dataDir, 'secrets', 'email-action-key')),
        webhookKey: () => loadOrCreateSecret(join(embedded.dataDir, 'secrets', 'webhook-secret-key')),
        actionBaseUrl: ownOrigin,
      }),
      // A newcomer's first `curl /api/v1/products` shows a small demo catalog (seeded once, when empty).
      commerce: readCommerceConfig(e, { databaseUrl: urls.url('commerce'), seedDemo: true, grpcPort: grpcPort.commerce }),
      audit: readAuditConfig(e, {
        databaseUrl: urls.url('audit'),
        grpcPort: grpcPort.audit,
        checkpointSigningKey: () => loadOrCreateSecret(join(embedded.dataDir, 'secrets', 'audit-checkpoint-signing-key')),
      }),
      metricsPorts: Object.fromEntries(SERVICES.map((s) => [s, readMetricsPort(e, s)])) as Record<ServiceName, number>,
      admin: {
        email: e.optionalString('ADMIN_EMAIL'),
        password: e.optionalString('ADMIN_PASSWORD'),
        firstName: e.optionalString('ADMIN_FIRST_NAME'),
        lastName: e.optionalString('ADMIN_LAST_NAME'),
      },
    }));

    logger = createLogger({ level: config.runtime.logLevel, service: 'iam', destination: logDestination(local.logFormat) });
    const log = logger;
    lifecycle = new Lifecycle(logger, config.runtime.shutdownTimeoutMs);
    // One tracer provider for the whole process (spans name their service in `iam.service`).
    startTracing(config.runtime.tracing, { serviceName: 'iam', logger, lifecycle });
    lifecycle.installSignalHandlers();

    // Services left on their embedded database: migrated by its owner, run as its runtime role.
    const onEmbedded = SERVICES.filter((s) => config[s].databaseUrl === urls.url(s));
    if (onEmbedded.length > 0) {
      const pg = await startEmbeddedPostgres({
        dir: urls.dir,
        port: embedded.port,
        onLog: (line) => log.debug({ component: 'postgres' }, line),
      });
      lifecycle.onShutdown('embedded PostgreSQL', () => pg.stop());
      for (const db of onEmbedded) {
        await prepareEmbeddedDatabase({ serverUrl: urls.adminUrl('postgres'), dbUrl: urls.adminUrl(db), db, roles: urls.roles(db), logger: log });
      }
      log.info({ port: embedded.port, dataDir: urls.dir, runtimeRoles: onEmbedded.map((db) => urls.roles(db).runtime.name) }, 'embedded PostgreSQL started');
    }
    const migrateAs = Object.fromEntries(
      onEmbedded.map((db) => [db, { ownerUrl: urls.ownerUrl(db), runtimeRole: urls.roles(db).runtime.name, env: process.env }]),
    );

    // No metrics of the bus's own: each service counts its consumers' deliveries in its registry.
    const bus: EventBus = config.runtime.natsUrl
      ? new JetStreamEventBus({ url: config.runtime.natsUrl, name: 'iam-all-in-one', logger, connection: config.runtime.nats })
      : new InMemoryEventBus({ logger });
    lifecycle.onShutdown('event bus', () => bus.close());
    log.info({ bus: bus.kind }, 'event bus');

    // No SMTP_URL: outgoing mail is kept in memory and shown in the console (development only:
    // nothing but this composition root makes a mailbox).
    const mailbox = config.notification.smtp || !config.notification.actionBaseUrl ? undefined : new MemoryMailbox();
    const admin = config.admin.email && config.admin.password ? { ...config.admin, email: config.admin.email, password: config.admin.password } : undefined;
    const system = await startSystem({
      config,
      logger,
      bus,
      lifecycle,
      metricsPorts: config.metricsPorts,
      grpcConnectionAge: config.runtime.grpcConnectionAge,
      grpcCredentials: grpcCredentials(config.runtime.grpcTls),
      admin,
      migrateAs,
      mailbox,
      transport: local.transport,
    });
    const gateway = system.gateways[0]!;
    await gateway.health.refresh();
    const host = config.gateway.host === '0.0.0.0' || config.gateway.host === '::' ? 'localhost' : config.gateway.host;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${gateway.port}`;
    // The console and the account page sign in through the OpenID provider, which sends browsers
    // back only under PUBLIC_URL (http://localhost:{PORT} by default): their links name it.
    const site = config.identity.publicUrl.endsWith(':0') ? url : config.identity.publicUrl;
    log.info(
      { port: gateway.port, startupMs: Date.now() - started, ready: gateway.health.snapshot().ready },
      `iam is up at ${url} (the console at ${site}/console, your account at ${site}/account, the API documents at ${url}/docs); Ctrl-C stops it`,
    );
    if (mailbox) log.info({ capacity: mailbox.capacity }, `no SMTP_URL: mail is kept in the development mailbox, ${site}/console/mailbox`);
  } catch (err) {
    // What did start (the embedded PostgreSQL above all) stops before the process exits: a failed
    // start must not leave a server holding the data directory and its port.
    await lifecycle?.shutdown('start-up failed');
    exitOnStartupError(err, logger);
  }
}

void main();
