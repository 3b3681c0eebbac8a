/**
 * Starts the gateway on a runtime (logger, metrics, bus, lifecycle): upstream clients and
 * readiness checks, the Fastify app, the HTTP listener, and their shutdown.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { EventBus } from '@iam/platform/bus';
import { HealthMonitor, type Lifecycle, type Logger, type Metrics } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app';
import { createAuthenticator } from './auth/authenticator';
import { Denylist, syncDenylist } from './auth/denylist';
import { JwksCache } from './auth/jwks';
import type { GatewayConfig } from './config';
import { createUpstreams } from './upstreams';

export interface GatewayRuntime {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly bus: EventBus;
  readonly lifecycle: Lifecycle;
  /** TLS for the channels to the services (plaintext when absent). */
  readonly grpcClientCredentials?: ChannelCredentials;
}

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly port: number;
  readonly health: HealthMonitor;
}

export async function startGateway(config: GatewayConfig, rt: GatewayRuntime): Promise<RunningGateway> {
  const logger = rt.logger.child({ component: 'gateway' });
  const upstreams = createUpstreams(config, { metrics: rt.metrics, bus: rt.bus, credentials: rt.grpcClientCredentials });
  rt.lifecycle.onShutdown('gateway upstream clients', () => upstreams.close());
  const health = new HealthMonitor({ checks: upstreams.checks, logger });
  health.start();
  rt.lifecycle.onShutdown('gateway health', () => health.stop());

  const jwks = new JwksCache(async () => (await upstreams.identity.getJwks({})).keys, config.jwt.alg, logger);
  jwks.start();
  rt.lifecycle.onShutdown('gateway JWKS cache', () => jwks.stop());
  const denylist = new Denylist();
  const sync = syncDenylist({
    denylist,
    bus: rt.bus,
    load: () => upstreams.identity.listRevokedTokens({}),
    logger,
  });
  rt.lifecycle.onShutdown('gateway denylist sync', () => sync.stop());
  const authenticator = createAuthenticator({ jwks, denylist, ...config.jwt });

  const app = await buildApp({ config, logger, metrics: rt.metrics, health, upstreams, authenticator, denylist });
  await app.listen({ host: config.host, port: config.port });
  rt.lifecycle.onShutdown('gateway HTTP server', () => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port, profiles: config.profiles }, 'gateway listening');
  return { app, port, health };
}
