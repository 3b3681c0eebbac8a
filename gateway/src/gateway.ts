/**
 * Starts the gateway on a runtime (logger, metrics, bus, lifecycle): upstream clients and
 * readiness checks, the Fastify app, the HTTP listener (and the ops listener, GATEWAY_OPS_PORT),
 * and their shutdown. Ready once identity's JWKS is loaded and, for the Full and Compact
 * profiles, identity and directory serve (their database: the spec's readiness); commerce, audit,
 * notification and NATS are reported, never required: one that is down costs only its routes,
 * which answer 503 at once while its health check fails.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { EventBus } from '@iam/platform/bus';
import { HealthMonitor, type Lifecycle, type Logger, type Metrics, startOpsServer } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from './app';
import { createAuthenticator } from './auth/authenticator';
import { Denylist, syncDenylist } from './auth/denylist';
import { MemoryReplayStore, RedisReplayStore, type ReplayStore, ReportingReplayStore, createDpopVerifier } from './auth/dpop';
import { JwksCache } from './auth/jwks';
import { OpaqueTokenCache, claimsFromIdentity } from './auth/opaque-tokens';
import { ReadCache, subscribeReadCache } from './cache/read-cache';
import type { GatewayConfig } from './config';
import type { DevMailbox } from './routes/dev-mailbox';
import { createUpstreams, knownDown, readinessChecks } from './upstreams';


/**
 * How long the gateway keeps identity's answer about an opaque access token (never past its
 * expiry), and how many answers at most. Revocations and ended sessions count at once all the
 * same (the denylist is checked on every request); a grant the library ends otherwise (a reused
 * refresh token) stops within these seconds.
 */
const OPAQUE_TOKEN_CACHE = { ttlMs: 5_000, maxEntries: 10_000 };

export interface GatewayRuntime {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly bus: EventBus;
  readonly lifecycle: Lifecycle;
  /** The key the gateway signs its calls' assertions with (INTERNAL_CALL_KEY), naming the user each request verified. */
  readonly callKey: Buffer;
  /** TLS for the channels to the services (plaintext when absent). */
  readonly grpcClientCredentials?: ChannelCredentials;
  /**
   * The development mailbox (`/api/v1/dev/mailbox`): given only by the all-in-one's composition
   * root when it keeps mail in memory (no SMTP_URL); never by the gateway's own process (main.ts).
   */
  readonly devMailbox?: DevMailbox;
}

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly port: number;
  readonly health: HealthMonitor;
  /** The ops listener's port (GATEWAY_OPS_PORT), when there is one. */
  readonly opsPort?: number;
}

export async function startGateway(config: GatewayConfig, rt: GatewayRuntime): Promise<RunningGateway> {
  const logger = rt.logger.child({ component: 'gateway' });
  // Calls to an upstream found down by two health checks in a row (it has been down for a
  // second at least) answer 503 at once (upstreams.ts). One failed check is not enough: the first
  // check at start may just take longer than a connection does.
  const monitor: { current?: HealthMonitor } = {};
  // A call answered since a failing check started makes that check stale: calls go through again.
  const lastAnswerAt = new Map<string, number>();
  const down = (name: string): boolean => knownDown(monitor.current?.snapshot(), name, lastAnswerAt.get(name));
  const answered = (name: string): void => void lastAnswerAt.set(name, Date.now());
  const upstreams = createUpstreams(config, { metrics: rt.metrics, bus: rt.bus, credentials: rt.grpcClientCredentials, down, answered, signer: { key: rt.callKey, from: 'gateway' } });
  rt.lifecycle.onShutdown('gateway upstream clients', () => upstreams.close());
  const jwks = new JwksCache(async () => (await upstreams.identity.getJwks({})).keys, config.jwt.alg, logger);
  jwks.start();
  rt.lifecycle.onShutdown('gateway JWKS cache', () => jwks.stop());
  const health = new HealthMonitor({ ...readinessChecks(config.profiles, upstreams, { jwks: () => jwks.check(), metrics: rt.metrics, bus: rt.bus }), logger });
  monitor.current = health;
  health.start();
  rt.lifecycle.onShutdown('gateway health', () => health.stop());
  const denylist = new Denylist();
  const sync = syncDenylist({
    denylist,
    bus: rt.bus,
    load: () => upstreams.identity.listRevokedTokens({}),
    logger,
  });
  rt.lifecycle.onShutdown('gateway denylist sync', () => sync.stop());
  // The provider's opaque access tokens (a code exchange without `resource`): asked of identity, kept a few seconds.
  const opaque = new OpaqueTokenCache(async (accessToken) => claimsFromIdentity((await upstreams.identity.validateToken({ accessToken })).claims), OPAQUE_TOKEN_CACHE);
  const authenticator = createAuthenticator({ jwks, denylist, ...config.jwt, publicUrl: config.publicUrl, dpop: createDpopVerifier({ replay: dpopReplayStore(config, rt) }), opaque });

  let readCache: ReadCache | undefined;
  if (config.readCache.enabled) {
    readCache = new ReadCache({ ttlMs: config.readCache.ttlMs, maxEntries: config.readCache.maxEntries, metrics: rt.metrics, logger });
    const cacheSub = subscribeReadCache(readCache, rt.bus);
    rt.lifecycle.onShutdown('gateway read cache', () => cacheSub.stop());
  }

  const app = await buildApp({ config, logger, metrics: rt.metrics, health, upstreams, authenticator, denylist, readCache, devMailbox: rt.devMailbox });
  await app.listen({ host: config.host, port: config.port, backlog: config.listenBacklog });
  rt.lifecycle.onShutdown('gateway HTTP server', () => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port, profiles: config.profiles }, 'gateway listening');
  let opsPort: number | undefined;
  if (config.opsPort) {
    const ops = await startOpsServer({ host: config.host, port: config.opsPort, health, metrics: rt.metrics, logger });
    rt.lifecycle.onShutdown('gateway ops server', () => ops.close());
    opsPort = ops.port;
  }
  return { app, port, health, opsPort };
}

/**
 * Where DPoP proof ids are remembered: with REDIS_URL, in Redis (every replica refuses a proof
 * any replica took; `{REDIS_KEY_PREFIX}dpop-jti:`); while Redis fails, a proof is refused with 503
 * (fail closed: a proof kept only in this process could be replayed at another replica) and
 * dpop_replay_store_errors_total counts it. Without REDIS_URL, in this process (one gateway).
 */
function dpopReplayStore(config: GatewayConfig, rt: GatewayRuntime): ReplayStore {
  if (!config.redis.url) return new MemoryReplayStore();
  // As the rate limits' client: fail fast, never queue while Redis is away.
  const redis = new Redis(config.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
  let warned = 0;
  const warn = (err: unknown) => {
    if (Date.now() - warned < 30_000) return;
    warned = Date.now();
    rt.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'DPoP replay store (Redis) unreachable; DPoP proofs are refused (503) until it answers');
  };
  redis.on('error', warn);
  rt.lifecycle.onShutdown('gateway DPoP replay store', async () => {
    redis.disconnect();
  });
  return new ReportingReplayStore(new RedisReplayStore(redis, `${config.redis.keyPrefix}dpop-jti:`), (err) => {
    rt.metrics.dpopReplayStoreErrors.inc();
    warn(err);
  });
}
