/**
 * The gateway's view of the services: typed gRPC clients, and health checks that ask each
 * service's grpc.health.v1 endpoint for the whole service (""), its database ("db") and its
 * NATS connection ("bus"). Only identity and directory decide the gateway's readiness, for the
 * Full and Compact profiles (readinessChecks): any other upstream that is down costs only the
 * routes that call it, which answer 503 at once while its check says so (`failFast`), not a
 * cascade that takes every gateway pod out of its Service.
 * Commerce is an upstream only when the edge profile is mounted (and a target is configured): its
 * clients and checks exist then.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { auditV1, commerceV1, directoryV1, healthV1, identityClientsV1, identityProvidersV1, identityV1, organizationTokensV1, organizationsV1, scimV1, webhooksV1 } from '@iam/contracts';
import { type EventBus, busCheck } from '@iam/platform/bus';
import { AppError, type HealthCheck, type HealthSnapshot, type Metrics, TimeoutError } from '@iam/platform/core';
import { type AsyncClient, type CallSigner, createGrpcClient } from '@iam/platform/grpc';
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
  /** The OAuth client registry (identity), for the clients API. */
  readonly clients: AsyncClient<typeof identityClientsV1.ClientServiceService>;
  /** Upstream identity providers (identity), for their API. */
  readonly identityProviders: AsyncClient<typeof identityProvidersV1.IdentityProviderServiceService>;
  /** Sign-ins with other providers linked to accounts (identity), for the account page and the user page. */
  readonly linkedIdentities: AsyncClient<typeof identityProvidersV1.LinkedIdentityServiceService>;
  readonly users: AsyncClient<typeof directoryV1.UserServiceService>;
  readonly roles: AsyncClient<typeof directoryV1.RoleServiceService>;
  readonly permissions: AsyncClient<typeof directoryV1.PermissionServiceService>;
  readonly links: AsyncClient<typeof directoryV1.RolePermissionServiceService>;
  /** Organizations, their members and the organization role template (directory). */
  readonly organizations: AsyncClient<typeof organizationsV1.OrganizationServiceService>;
  /** SCIM 2.0 per organization (directory): requests passed through as they came. */
  readonly scim: AsyncClient<typeof scimV1.ScimServiceService>;
  /** Organization tokens (identity). */
  readonly organizationTokens: AsyncClient<typeof organizationTokensV1.OrganizationTokenServiceService>;
  /** Outgoing webhooks (notification): their routes answer 503 while it is down; never part of readiness. */
  readonly webhooks: AsyncClient<typeof webhooksV1.WebhookServiceService>;
  /** The audit trail: its routes answer 503 while it is down; never part of readiness. */
  readonly audit: AsyncClient<typeof auditV1.AuditServiceService>;
  /** Present when the edge profile is mounted and COMMERCE_GRPC_TARGET is set. */
  readonly commerce?: CommerceClients;
  readonly checks: Record<string, HealthCheck>;
  close(): void;
}

/**
 * `signer`: every call carries the gateway's call assertion naming the user of the request it
 * serves (the services take the actor from it alone). `down`: which upstreams the health monitor
 * last found down (their calls then fail fast); absent: none.
 */
export function createUpstreams(
  config: GatewayConfig,
  deps: { metrics: Metrics; bus: EventBus; signer: CallSigner; credentials?: ChannelCredentials; down?: UpstreamDown; answered?: (name: string) => void },
): Upstreams {
  const closers: Array<() => void> = [];
  const down = deps.down ?? (() => false);
  const client = <D extends Parameters<typeof createGrpcClient>[0]>(name: string, definition: D, target: string, idempotent: Array<keyof D>) => {
    const c = createGrpcClient(definition, { target, metrics: deps.metrics, credentials: deps.credentials, defaultDeadlineMs: config.upstreamTimeoutMs, idempotent, assert: { signer: deps.signer, to: name } });
    closers.push(() => c.close());
    return failFast(name, c.call, down, deps.answered);
  };
  const { identity: idTarget, directory: dirTarget } = config.upstreams;

  const commerceTarget = config.profiles.includes('edge') ? config.upstreams.commerce : undefined;
  const targets: Array<[string, string]> = UPSTREAMS.map((n) => [n, config.upstreams[n]]);
  if (commerceTarget) targets.push(['commerce', commerceTarget]);

  const checks: Record<string, HealthCheck> = {};
  for (const [name, target] of targets) {
    const health = createGrpcClient(healthV1.HealthService, { target, metrics: deps.metrics, credentials: deps.credentials, defaultDeadlineMs: UPSTREAM_CHECK_DEADLINE_MS });
    closers.push(() => health.close());
    const serving = async (service: string): Promise<void> => {
      let res;
      try {
        res = await health.call.check({ service });
      } catch (err) {
        // No answer in time is not a refusal: it does not make calls to it fail fast (failFast).
        if (err instanceof AppError && err.code === 'TIMEOUT') throw new TimeoutError(`${name} health check: no answer in time`);
        throw err;
      }
      if (res.status !== healthV1.HealthCheckResponse_ServingStatus.SERVING) throw new Error(`${name} ${service || 'service'} not serving`);
    };
    checks[name] = () => serving('');
    checks[`${name}.db`] = () => serving('db');
    checks[`${name}.bus`] = () => serving('bus');
  }

  return {
    identity: client('identity', identityV1.IdentityServiceService, idTarget, ['validateToken', 'introspect', 'getJwks', 'listRevokedTokens']),
    clients: client('identity', identityClientsV1.ClientServiceService, idTarget, ['listClients', 'getClient']),
    identityProviders: client('identity', identityProvidersV1.IdentityProviderServiceService, idTarget, ['listIdentityProviders', 'getIdentityProvider']),
    linkedIdentities: client('identity', identityProvidersV1.LinkedIdentityServiceService, idTarget, ['listMyIdentities', 'listUserIdentities']),
    users: client('directory', directoryV1.UserServiceService, dirTarget, ['getUser', 'listUsers']),
    roles: client('directory', directoryV1.RoleServiceService, dirTarget, ['getRole', 'listRoles']),
    permissions: client('directory', directoryV1.PermissionServiceService, dirTarget, ['getPermission', 'listPermissions']),
    links: client('directory', directoryV1.RolePermissionServiceService, dirTarget, ['getRolePermission', 'listRolePermissions']),
    scim: client('directory', scimV1.ScimServiceService, dirTarget, []),
    organizations: client('directory', organizationsV1.OrganizationServiceService, dirTarget, ['getOrganization', 'listOrganizations', 'listMembers', 'getMember', 'getOrganizationRole', 'listOrganizationRoles']),
    organizationTokens: client('identity', organizationTokensV1.OrganizationTokenServiceService, idTarget, ['exchangeOrganizationToken']),
    audit: client('audit', auditV1.AuditServiceService, config.upstreams.audit, ['listAuditEvents', 'verifyAuditChain']),
    webhooks: client('notification', webhooksV1.WebhookServiceService, config.upstreams.notification, ['listEndpoints', 'getEndpoint', 'listMessages', 'listAttempts']),
    commerce: commerceTarget
      ? {
          catalog: client('commerce', commerceV1.CatalogServiceService, commerceTarget, ['listProducts', 'getProduct', 'batchGetProducts', 'archiveProduct']),
          carts: client('commerce', commerceV1.CartServiceService, commerceTarget, ['getCart', 'replaceCart', 'clearCart']),
          // Checkout is idempotent by its key, and a replay never reserves twice.
          orders: client('commerce', commerceV1.OrderServiceService, commerceTarget, ['getOrder', 'listOrders', 'checkout', 'cancelOrder']),
        }
      : undefined,
    checks,
    close: () => closers.forEach((c) => c()),
  };
}

/**
 * The gateway's readiness: with an API profile mounted, identity's signing keys loaded (it cannot
 * verify a token otherwise; its configuration was checked at start), and, for the Full and
 * Compact profiles, identity and directory serving: they are those profiles' database (spec: the
 * readiness probe is 503 while the database is not ready). Nothing else decides it: commerce,
 * audit, notification, each service's NATS and the gateway's own (`bus`, with the
 * `nats_connected` gauge) are informational, so their outage costs only the routes that call
 * them (a fast 503), never every gateway pod its place in the Service.
 */
export function readinessChecks(
  profiles: readonly Profile[],
  upstreams: Pick<Upstreams, 'checks'>,
  deps: { jwks: HealthCheck; bus: EventBus; metrics: Metrics },
): { checks: Record<string, HealthCheck>; informational: Record<string, HealthCheck> } {
  const needed = new Set(profiles.some((p) => p === 'full' || p === 'compact') ? ['identity', 'directory'] : []);
  const checks: Record<string, HealthCheck> = profiles.length > 0 ? { jwks: deps.jwks } : {};
  const informational: Record<string, HealthCheck> = { bus: busCheck(deps.bus, deps.metrics) };
  for (const [name, check] of Object.entries(upstreams.checks)) (needed.has(name) ? checks : informational)[name] = check;
  return { checks, informational };
}

/**
 * Whether an upstream is known to be down: its health checks (every second) have failed for a
 * while with an answer (a refused connection, or "not serving"). Calls to it then answer
 * UNAVAILABLE at once instead of waiting for a connection or a deadline; before the first check,
 * once it passes again, or while its checks only time out (on a starved event loop the slowness
 * may be this process's own), calls go through.
 */
export type UpstreamDown = (name: string) => boolean;

/** How long an upstream's health checks must have failed before its calls fail fast (two checks, one second apart). */
export const UPSTREAM_DOWN_AFTER_MS = 900;

/** How long a health check may take (its deadline): a check that found an upstream down may have started this long before its snapshot. */
export const UPSTREAM_CHECK_DEADLINE_MS = 800;

/**
 * The UpstreamDown rule over a health snapshot (undefined: no check yet). `lastAnswerAt`: when a
 * call to it last got an answer; one since the failing check may have started means the check is
 * already stale (it ran during an outage that has ended), so calls go through.
 */
export function knownDown(s: HealthSnapshot | undefined, name: string, lastAnswerAt?: number): boolean {
  const since = s?.since[name];
  if (!s || s.checks[name] !== 'down' || s.timedOut.includes(name) || since === undefined) return false;
  if (lastAnswerAt !== undefined && lastAnswerAt >= s.checkedAt.getTime() - UPSTREAM_CHECK_DEADLINE_MS) return false;
  return s.checkedAt.getTime() - since.getTime() >= UPSTREAM_DOWN_AFTER_MS;
}

/** Whether an upstream's failure means it gave no answer (it is unreachable or too slow), as opposed to an answer that refuses the call. */
function unanswered(err: unknown): boolean {
  return !(err instanceof AppError) || err.code === 'UNAVAILABLE' || err.code === 'TIMEOUT';
}

/**
 * `client` whose calls fail fast with UNAVAILABLE while `down(name)`; `answered(name)` is told
 * of every call that got an answer (a result, or an error the upstream sent).
 */
export function failFast<C extends object>(name: string, client: C, down: UpstreamDown, answered: (name: string) => void = () => {}): C {
  const guarded = {} as Record<string, unknown>;
  for (const [method, fn] of Object.entries(client)) {
    guarded[method] = async (...args: unknown[]) => {
      if (down(name)) throw AppError.unavailable('An upstream service is unavailable; try again shortly.');
      try {
        const result = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
        answered(name);
        return result;
      } catch (err) {
        if (!unanswered(err)) answered(name);
        throw err;
      }
    };
  }
  return guarded as C;
}
