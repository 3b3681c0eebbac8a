/**
 * The gateway's view of the services: typed gRPC clients, and health checks that ask each
 * service's grpc.health.v1 endpoint for the whole service (""), its database ("db") and its
 * NATS connection ("bus"). Readiness needs only the upstreams of the mounted profiles
 * (readinessChecks); the rest is reported.
 * Commerce is an upstream only when the edge profile is mounted (and a target is configured): its
 * clients and checks exist then, and readiness counts it.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { auditV1, commerceV1, directoryV1, healthV1, identityV1 } from '@iam/contracts';
import { type EventBus, busCheck } from '@iam/platform/bus';
import type { HealthCheck, Metrics } from '@iam/platform/core';
import { type AsyncClient, createGrpcClient } from '@iam/platform/grpc';
import type { GatewayConfig, Profile } from './config';

export const UPSTREAMS = ['identity', 'directory', 'notification', 'audit'] as const;
export type UpstreamName = (typeof UPSTREAMS)[number];

/** The commerce service's clients (the edge profile). */
export interface CommerceClients {
  readonly catalog: AsyncClient<typeof commerceV1.CatalogServiceService>;
  readonly carts: AsyncClient<typeof commerceV1.CartServiceService>;
  readonly orders: AsyncClient<typeof commerceV1.OrderServiceService>;
}

export interface Upstreams {
  readonly identity: AsyncClient<typeof identityV1.IdentityServiceService>;
  readonly users: AsyncClient<typeof directoryV1.UserServiceService>;
  readonly roles: AsyncClient<typeof directoryV1.RoleServiceService>;
  readonly permissions: AsyncClient<typeof directoryV1.PermissionServiceService>;
  readonly links: AsyncClient<typeof directoryV1.RolePermissionServiceService>;
  /** The audit trail: its routes answer 503 while it is down; never part of readiness. */
  readonly audit: AsyncClient<typeof auditV1.AuditServiceService>;
  /** Present when the edge profile is mounted and COMMERCE_GRPC_TARGET is set. */
  readonly commerce?: CommerceClients;
  readonly checks: Record<string, HealthCheck>;
  close(): void;
}

export function createUpstreams(config: GatewayConfig, deps: { metrics: Metrics; bus: EventBus; credentials?: ChannelCredentials }): Upstreams {
  const closers: Array<() => void> = [];
  const client = <D extends Parameters<typeof createGrpcClient>[0]>(definition: D, target: string, idempotent: Array<keyof D>) => {
    const c = createGrpcClient(definition, { target, metrics: deps.metrics, credentials: deps.credentials, defaultDeadlineMs: config.upstreamTimeoutMs, idempotent });
    closers.push(() => c.close());
    return c.call;
  };
  const { identity: idTarget, directory: dirTarget } = config.upstreams;

  const commerceTarget = config.profiles.includes('edge') ? config.upstreams.commerce : undefined;
  const targets: Array<[string, string]> = UPSTREAMS.map((n) => [n, config.upstreams[n]]);
  if (commerceTarget) targets.push(['commerce', commerceTarget]);

  const checks: Record<string, HealthCheck> = {};
  for (const [name, target] of targets) {
    const health = createGrpcClient(healthV1.HealthService, { target, metrics: deps.metrics, credentials: deps.credentials, defaultDeadlineMs: 800 });
    closers.push(() => health.close());
    const serving = async (service: string): Promise<void> => {
      const res = await health.call.check({ service });
      if (res.status !== healthV1.HealthCheckResponse_ServingStatus.SERVING) throw new Error(`${name} ${service || 'service'} not serving`);
    };
    checks[name] = () => serving('');
    checks[`${name}.db`] = () => serving('db');
    checks[`${name}.bus`] = () => serving('bus');
  }

  return {
    identity: client(identityV1.IdentityServiceService, idTarget, ['validateToken', 'introspect', 'getJwks', 'listRevokedTokens']),
    users: client(directoryV1.UserServiceService, dirTarget, ['getUser', 'listUsers']),
    roles: client(directoryV1.RoleServiceService, dirTarget, ['getRole', 'listRoles']),
    permissions: client(directoryV1.PermissionServiceService, dirTarget, ['getPermission', 'listPermissions']),
    links: client(directoryV1.RolePermissionServiceService, dirTarget, ['getRolePermission', 'listRolePermissions']),
    audit: client(auditV1.AuditServiceService, config.upstreams.audit, ['listAuditEvents', 'verifyAuditChain']),
    commerce: commerceTarget
      ? {
          catalog: client(commerceV1.CatalogServiceService, commerceTarget, ['listProducts', 'getProduct', 'batchGetProducts', 'archiveProduct']),
          carts: client(commerceV1.CartServiceService, commerceTarget, ['getCart', 'replaceCart', 'clearCart']),
          // Checkout is idempotent by its key, and a replay never reserves twice.
          orders: client(commerceV1.OrderServiceService, commerceTarget, ['getOrder', 'listOrders', 'checkout', 'cancelOrder']),
        }
      : undefined,
    checks,
    close: () => closers.forEach((c) => c()),
  };
}

/** Upstreams each profile calls; a profile's routes work only while these answer. */
const PROFILE_UPSTREAMS: Record<Profile, readonly string[]> = {
  full: ['identity', 'directory'],
  compact: ['identity', 'directory'],
  edge: ['identity', 'commerce'],
};

/**
 * The gateway's readiness: identity's JWKS loaded and every upstream of a mounted profile
 * serving (each service is itself ready only with its database). Everything else (notification,
 * the databases by name, each service's NATS and the gateway's own, as `bus` with the
 * `nats_connected` gauge) is informational: in the health detail, never making the gateway unready.
 */
export function readinessChecks(
  profiles: readonly Profile[],
  upstreams: Pick<Upstreams, 'checks' | 'commerce'>,
  deps: { jwks: HealthCheck; bus: EventBus; metrics: Metrics },
): { checks: Record<string, HealthCheck>; informational: Record<string, HealthCheck> } {
  const needed = new Set(profiles.flatMap((p) => (p === 'edge' && !upstreams.commerce ? [] : PROFILE_UPSTREAMS[p])));
  const checks: Record<string, HealthCheck> = profiles.length > 0 ? { jwks: deps.jwks } : {};
  const informational: Record<string, HealthCheck> = { bus: busCheck(deps.bus, deps.metrics) };
  for (const [name, check] of Object.entries(upstreams.checks)) (needed.has(name) ? checks : informational)[name] = check;
  return { checks, informational };
}
