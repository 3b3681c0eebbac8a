/**
 * The whole system in one process: every service and one or more gateway replicas, wired to each
 * other on loopback. One function for the all-in-one runner (main.ts), the end-to-end tests and
 * the fault tests; each brings its own configuration, databases, bus and lifecycle.
 */
import { randomBytes } from 'node:crypto';
import type { ChannelCredentials, ServerCredentials } from '@grpc/grpc-js';
import { type AuditConfig, auditService } from '@iam/audit';
import { type CommerceConfig, commerceService } from '@iam/commerce';
import { type DirectoryConfig, type TxtResolver, createDirectoryUseCases, directoryService } from '@iam/directory';
import { type GatewayConfig, type RunningGateway, startGateway } from '@iam/gateway';
import { type AuthFaults, type ClientLookup, type IdentityConfig, type PresetEndpoints, identityService } from '@iam/identity';
import { type MemoryMailbox, type NotificationConfig, notificationService } from '@iam/notification';
import {
  type EventBus,
  type Lifecycle,
  type Logger,
  type Metrics,
  type RunningService,
  type ServiceRuntime,
  type ServiceSpec,
  createMetrics,
  startService,
} from '@iam/platform';

export const SERVICES = ['directory', 'identity', 'notification', 'commerce', 'audit'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface SystemConfig {
  readonly gateway: GatewayConfig;
  readonly directory: DirectoryConfig;
  readonly identity: Omit<IdentityConfig, 'directoryTarget'>;
  readonly commerce: Omit<CommerceConfig, 'directoryTarget'>;
  /** Absent when notification runs elsewhere (see `external`). */
  readonly notification?: NotificationConfig;
  /** Absent: no audit trail in this system (its routes answer 503). */
  readonly audit?: Omit<AuditConfig, 'directoryTarget'>;
}

export interface SystemOptions {
  readonly config: SystemConfig;
  readonly logger: Logger;
  readonly bus: EventBus;
  readonly lifecycle: Lifecycle;
  /** Gateway replicas (default 1). */
  readonly gateways?: number;
  /** The bus of gateway replica `i` (default: the shared one); separate processes would each have their own. */
  readonly gatewayBus?: (i: number) => EventBus;
  /** The gateways' metrics: what their public /metrics shows (default: a registry with the process metrics). */
  readonly gatewayMetrics?: Metrics;
  /** Each service's own metrics (default: a fresh registry without the process metrics). */
  readonly serviceMetrics?: (name: ServiceName) => Metrics;
  /**
   * How the components in this process call each other: `in-process` calls the generated service
   * interfaces directly (grpc/in-process.ts: same deadlines, metadata, call assertion, error
   * mapping and tracing, no socket; make run), `grpc` over loopback gRPC (default). Services run
   * outside this process (`external`) are always called over gRPC, and every service still
   * listens on its gRPC port (`targets`) for them and for tools.
   */
  readonly transport?: 'grpc' | 'in-process';
  /** Recycling of the services' gRPC connections (absent: the platform's default). */
  readonly grpcConnectionAge?: ServiceRuntime['grpcConnectionAge'];
  /** Ops ports (`<SERVICE>_METRICS_PORT`) of the services; 0 or absent = none. */
  readonly metricsPorts?: Partial<Record<ServiceName, number>>;
  readonly grpcCredentials?: { readonly server?: ServerCredentials; readonly client?: ChannelCredentials };
  /**
   * The key the processes' gRPC call assertions are signed with (INTERNAL_CALL_KEY). Default: one
   * made now: every component is in this process. A service run outside it (`external`) must be
   * given the same.
   */
  readonly callKey?: Buffer;
  /** The administrator to create or update at start (`--create-admin`). */
  readonly admin?: { readonly email: string; readonly password: string; readonly firstName?: string; readonly lastName?: string };
  /** The OAuth client registry the OpenID provider reads (tests; none otherwise until the clients store is wired). */
  readonly identityClients?: ClientLookup;
  /** Fault hooks of identity (tests only). */
  readonly identityFaults?: AuthFaults;
  /**
   * Where identity's GitHub and Google presets live (tests only: local stand-ins). Never from the
   * environment or an API caller: a provider's settings can name no endpoint of a preset (SSRF).
   */
  readonly federationPresets?: PresetEndpoints;
  /** The directory's DNS TXT lookups for domain verification (tests: a stub; `node:dns/promises` otherwise). */
  readonly directoryResolver?: TxtResolver;
  /** Services that run outside this process, by gRPC target (fault tests run notification on its own). */
  readonly external?: Partial<Record<ServiceName, string>>;
  /**
   * Services whose databases are migrated by their owner role first, the service then running as
   * its runtime role (make run on the embedded PostgreSQL); the others migrate at start.
   */
  readonly migrateAs?: Partial<Record<ServiceName, ServiceRuntime['migrateAs']>>;
  /**
   * The development mailbox: notification delivers into it when it has no SMTP_URL, and the
   * gateways read it (`/api/v1/dev/mailbox`) through this same object, in this process. Only
   * this composition root passes one (make run); a service's or the gateway's own process cannot.
   */
  readonly mailbox?: MemoryMailbox;
}

export interface RunningSystem {
  readonly services: Partial<Record<ServiceName, RunningService>>;
  readonly gateways: RunningGateway[];
  /** Where each service answers over gRPC (`host:port`). */
  readonly targets: Record<ServiceName, string>;
  /** What the components in this process call each service at (`targets`, or `in-process:<name>`). */
  readonly callTargets: Record<ServiceName, string>;
}

export async function startSystem(opts: SystemOptions): Promise<RunningSystem> {
  const { config, logger, bus, lifecycle } = opts;
  const callKey = opts.callKey ?? randomBytes(32);
  const services: Partial<Record<ServiceName, RunningService>> = {};
  const targets = { ...opts.external } as Record<ServiceName, string>;
  const callTargets = { ...opts.external } as Record<ServiceName, string>;
  // In-process names are unique in the process (tests start several systems in one).
  const inProcessPrefix = opts.transport === 'in-process' ? `iam-${randomBytes(6).toString('hex')}` : undefined;
  // Services are internal: they listen on loopback only, their ops ports included.
  const start = async (name: ServiceName, spec: (rt: ServiceRuntime) => ServiceSpec): Promise<void> => {
    if (opts.external?.[name]) return;
    const rt: ServiceRuntime = {
      logger,
      metrics: opts.serviceMetrics?.(name) ?? createMetrics({ defaultMetrics: false }),
      metricsPort: opts.metricsPorts?.[name],
      bus,
      lifecycle,
      bindHost: '127.0.0.1',
      callKey,
      grpcServerCredentials: opts.grpcCredentials?.server,
      grpcClientCredentials: opts.grpcCredentials?.client,
      grpcConnectionAge: opts.grpcConnectionAge,
      migrateAs: opts.migrateAs?.[name],
      inProcessName: inProcessPrefix && `${inProcessPrefix}-${name}`,
    };
    const running = await startService(spec(rt), rt);
    services[name] = running;
    targets[name] = `127.0.0.1:${running.grpcPort}`;
    callTargets[name] = running.inProcessTarget ?? targets[name];
  };

  // The bulk import enrols imported TOTP factors at identity, which starts after the directory.
  await start('directory', (rt) => directoryService(config.directory, rt, { resolver: opts.directoryResolver, identityTarget: () => callTargets.identity }));
  if (opts.admin && services.directory) {
    const { user, created } = await createDirectoryUseCases(services.directory.dataSource, config.directory).credentials.ensureAdministrator(opts.admin);
    logger.info({ email: user.email, created }, 'administrator account ready');
  }
  // The gateway proxies the OpenID provider at the port identity listens on (a free one for port 0).
  let identityOp: string | undefined;
  // Identity, notification, commerce and audit need only the directory (principals; who holds a
  // permission now): they start side by side, their database round trips overlapping (start-up
  // time, issue #43). Every start is waited for, so a failed one leaves nothing half-started
  // outside the lifecycle.
  const notification = config.notification;
  const audit = config.audit;
  const started = await Promise.allSettled([
    start('identity', (rt) =>
      identityService({ ...config.identity, directoryTarget: callTargets.directory }, rt, {
        clients: opts.identityClients,
        faults: opts.identityFaults,
        federationPresets: opts.federationPresets,
        onOpListening: (port) => void (identityOp = `http://127.0.0.1:${port}`),
      }),
    ),
    notification && start('notification', (rt) => notificationService({ ...notification, directoryTarget: callTargets.directory }, rt, { mailbox: opts.mailbox })),
    start('commerce', (rt) => commerceService({ ...config.commerce, directoryTarget: callTargets.directory }, rt)),
    audit && start('audit', (rt) => auditService({ ...audit, directoryTarget: callTargets.directory }, rt)),
  ]);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;

  const gatewayMetrics = opts.gatewayMetrics ?? createMetrics();
  const gateways: RunningGateway[] = [];
  for (let i = 0; i < (opts.gateways ?? 1); i++) {
    gateways.push(
      await startGateway(
        { ...config.gateway, upstreams: { ...config.gateway.upstreams, ...callTargets, ...(identityOp ? { identityOp } : {}) } },
        {
          logger,
          metrics: gatewayMetrics,
          bus: opts.gatewayBus?.(i) ?? bus,
          lifecycle,
          callKey,
          grpcClientCredentials: opts.grpcCredentials?.client,
          // Only when notification here delivers into it (no SMTP_URL, an action base URL).
          devMailbox: opts.mailbox && config.notification && !config.notification.smtp && config.notification.actionBaseUrl ? opts.mailbox : undefined,
        },
      ),
    );
  }
  return { services, gateways, targets, callTargets };
}
