/**
 * The gateway's view of the services: typed gRPC clients, and readiness checks that ask each
 * service's grpc.health.v1 endpoint for the whole service ("") and for its database ("db").
 * Commerce is an upstream only when the edge profile is mounted (and a target is configured): its
 * clients and checks exist then, and readiness counts it.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { commerceV1, directoryV1, healthV1, identityV1 } from '@iam/contracts';
import type { EventBus } from '@iam/platform/bus';
import type { HealthCheck, Metrics } from '@iam/platform/core';
import { type AsyncClient, createGrpcClient } from '@iam/platform/grpc';
import type { GatewayConfig } from './config';

export const UPSTREAMS = ['identity', 'directory', 'notification'] as const;
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
  }
  checks.bus = () => deps.bus.check();

  return {
    identity: client(identityV1.IdentityServiceService, idTarget, ['validateToken', 'introspect', 'getJwks', 'listRevokedTokens']),
    users: client(directoryV1.UserServiceService, dirTarget, ['getUser', 'listUsers']),
    roles: client(directoryV1.RoleServiceService, dirTarget, ['getRole', 'listRoles']),
    permissions: client(directoryV1.PermissionServiceService, dirTarget, ['getPermission', 'listPermissions']),
    links: client(directoryV1.RolePermissionServiceService, dirTarget, ['getRolePermission', 'listRolePermissions']),
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
