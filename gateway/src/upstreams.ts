/**
 * The gateway's view of the services: gRPC clients, and readiness checks that ask each
 * service's grpc.health.v1 endpoint for the whole service ("") and for its database ("db").
 */
import { healthV1 } from '@iam/contracts';
import { type EventBus, type HealthCheck, type Metrics, createGrpcClient } from '@iam/platform';
import type { GatewayConfig } from './config';

export const UPSTREAMS = ['identity', 'directory', 'notification'] as const;
export type UpstreamName = (typeof UPSTREAMS)[number];

export interface Upstreams {
  readonly checks: Record<string, HealthCheck>;
  close(): void;
}

export function createUpstreams(config: GatewayConfig, deps: { metrics: Metrics; bus: EventBus }): Upstreams {
  const checks: Record<string, HealthCheck> = {};
  const closers: Array<() => void> = [];
  for (const name of UPSTREAMS) {
    const health = createGrpcClient(healthV1.HealthService, {
      target: config.upstreams[name],
      metrics: deps.metrics,
      defaultDeadlineMs: 800,
    });
    closers.push(() => health.close());
    const serving = async (service: string): Promise<void> => {
      const res = await health.call.check({ service });
      if (res.status !== healthV1.HealthCheckResponse_ServingStatus.SERVING) throw new Error(`${name} ${service || 'service'} not serving`);
    };
    checks[name] = () => serving('');
    checks[`${name}.db`] = () => serving('db');
  }
  checks.bus = () => deps.bus.check();
  return { checks, close: () => closers.forEach((c) => c()) };
}

/** Names of the checks that tell whether the databases are reachable. */
export const DB_CHECKS = UPSTREAMS.map((n) => `${n}.db`);
