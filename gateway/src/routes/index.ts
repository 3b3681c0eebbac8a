/**
 * The API profiles' routes, by audience (./audiences.ts):
 *
 *   anonymous       login, refresh, password reset, email-verification confirm, JWKS
 *   anonymous       + the second step of a login with a second factor (auth/mfa.ts)
 *   authenticated   revoke, email-verification request, the caller's second factors and sessions
 *     requiring(users.manage)
 *                   a user's sessions, lock state, unlock, second-factor reset; the bulk import
 *     requiring(users.manage | roles.manage | permissions.manage | role-permissions.manage)
 *                   the collections, in the profile's dialect
 *     requiring(audit.read)
 *                   the audit trail and its chain verification (Full profile)
 *     requiring(users.manage)
 *                   the development mailbox (Full profile; only when given one: the all-in-one
 *                   without SMTP_URL)
 *     requiring(clients.manage)
 *                   the OAuth client registry (Full profile)
 *     requiring(identity-providers.manage)
 *                   upstream identity providers users may sign in with (Full profile)
 *     requiring(webhooks.manage)
 *                   outgoing webhooks: endpoints, messages, attempts, replays (Full profile)
 *     (the directory decides: organizations.manage, or the organization's org.admin)
 *                   organizations, members, the organization role template (Full profile)
 *
 * The edge profile's routes are in ./edge (its own audiences: public products, GraphQL).
 * Health, metrics and the docs are mounted for every profile elsewhere (health.ts, ../docs).
 * A new route goes into the group of its audience; it gets its authentication from the group.
 */
import type { HealthMonitor, Logger } from '@iam/platform/core';
import type { TObject, TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import type { Denylist } from '../auth/denylist';
import { cachedSpec, dropUsersAfter } from '../cache/cached-spec';
import type { ReadCache } from '../cache/read-cache';
import type { GatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';
import { anonymousAuthRoutes, loginRoute } from './auth/anonymous';
import { adminSecurityRoutes } from './auth/admin-security';
import { meRoutes } from './auth/me-security';
import { anonymousMfaRoutes } from './auth/mfa';
import { accountRoutes } from './auth/account';
import { sessionRoutes } from './auth/session';
import { authenticated, requiring, requiringAdministrator } from './audiences';
import { type CollectionSpec, type Dialect, collectionRoutes, compactDialect, fullDialect } from './collections/collection';
import { permissions, rolePermissions, roles, users } from './collections/resources';
import { auditRoutes } from './audit';
import { type DevMailbox, devMailboxRoutes } from './dev-mailbox';
import { clientRoutes } from './clients';
import { identityProviderRoutes } from './identity-providers';
import { myLinkedIdentityRoutes, userLinkedIdentityRoutes } from './auth/linked-identities';
import { webhookRoutes } from './webhooks';
import { organizationRoutes } from './organizations';
import { organizationTokenRoute } from './auth/organization-token';
import { userImportRoutes } from './user-import';

export interface ProfileDeps {
  readonly upstreams: Upstreams;
  readonly authenticator: Authenticator;
  readonly denylist: Denylist;
  readonly rateLimits: GatewayConfig['rateLimits'];
  readonly graphql: GatewayConfig['graphql'];
  readonly health: HealthMonitor;
  readonly logger: Logger;
  /** Single-resource reads by id are answered from it (absent: off). */
  readonly readCache?: ReadCache;
  /** The development mailbox (absent: its routes do not exist). */
  readonly devMailbox?: DevMailbox;
  /** PUBLIC_URL (absent: a request's own scheme and host). */
  readonly publicUrl?: string;
}

const AUDIT_READ = 'audit.read';
const USERS_MANAGE = 'users.manage';
const CLIENTS_MANAGE = 'clients.manage';
const WEBHOOKS_MANAGE = 'webhooks.manage';
const IDENTITY_PROVIDERS_MANAGE = 'identity-providers.manage';

/** The Full profile (spec §4.2). */
export async function fullProfile(app: FastifyInstance, deps: ProfileDeps): Promise<void> {
  const u = deps.upstreams;
  const c = deps.readCache;
  await app.register(loginRoute, { ...deps, path: '/api/v1/auth/generate-jwt', refreshToken: true });
  dropUsersAfter(app, c);
  await app.register(anonymousAuthRoutes, deps);
  await app.register(anonymousMfaRoutes, deps);
  await app.register(organizationTokenRoute, deps);
  await app.register(
    authenticated(deps.authenticator, async (ctx) => {
      await ctx.register(sessionRoutes, deps);
      await ctx.register(meRoutes, deps);
      await ctx.register(accountRoutes, deps);
      await ctx.register(requiring(USERS_MANAGE, (r) => r.register(adminSecurityRoutes, deps)));
      await ctx.register(myLinkedIdentityRoutes, { upstreams: u });
      await ctx.register(requiring(USERS_MANAGE, (r) => r.register(userLinkedIdentityRoutes, { upstreams: u })));
      await ctx.register(requiring(USERS_MANAGE, (r) => r.register(userImportRoutes, { upstreams: u })));
      await mountCollection(ctx, cachedSpec(users(u), c, 'user'), fullDialect('/api/v1/users'));
      await mountCollection(ctx, cachedSpec(roles(u), c, 'role'), fullDialect('/api/v1/roles'));
      await mountCollection(ctx, cachedSpec(permissions(u), c, 'permission'), fullDialect('/api/v1/permissions'));
      await mountCollection(ctx, cachedSpec(rolePermissions(u), c, 'link'), fullDialect('/api/v1/role-permissions'));
      await ctx.register(requiring(AUDIT_READ, (r) => r.register(auditRoutes, { upstreams: u })));
      const mailbox = deps.devMailbox;
      // Administrator only: the mails hold live reset and verification links of any account.
      if (mailbox) await ctx.register(requiringAdministrator((r) => r.register(devMailboxRoutes, { mailbox })));
      await ctx.register(requiring(CLIENTS_MANAGE, (r) => r.register(clientRoutes, { upstreams: u })));
      await ctx.register(requiring(WEBHOOKS_MANAGE, (r) => r.register(webhookRoutes, { upstreams: u })));
      // Authenticated only: an organization's own org.admin holders manage its members (the directory decides).
      await ctx.register(organizationRoutes, { upstreams: u, publicUrl: deps.publicUrl });
      await ctx.register(requiring(IDENTITY_PROVIDERS_MANAGE, (r) => r.register(identityProviderRoutes, { upstreams: u })));
    }),
  );
}

/** The Compact profile (spec §4.1): the same calls and policies under singular paths. */
export async function compactProfile(app: FastifyInstance, deps: ProfileDeps): Promise<void> {
  const u = deps.upstreams;
  const c = deps.readCache;
  await app.register(loginRoute, { ...deps, path: '/api/v1/generate-jwt', refreshToken: false });
  await app.register(
    authenticated(deps.authenticator, async (ctx) => {
      await mountCollection(ctx, cachedSpec(users(u), c, 'user'), compactDialect('/api/v1/user'));
      await mountCollection(ctx, cachedSpec(roles(u), c, 'role'), compactDialect('/api/v1/role'));
    }),
  );
}

/** A collection in the dialect of a profile, behind its permission. */
async function mountCollection<R, C extends TSchema, U extends TSchema, Q extends TObject>(ctx: FastifyInstance, spec: CollectionSpec<R, C, U>, dialect: Dialect<Q>): Promise<void> {
  await ctx.register(requiring(spec.permission, (r) => r.register(collectionRoutes, { spec, dialect })));
}
