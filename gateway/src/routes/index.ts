/**
 * The API profiles' routes, by audience (./audiences.ts):
 *
 *   anonymous       login, refresh, password reset, email-verification confirm, JWKS
 *   authenticated   revoke, email-verification request
 *     requiring(users.manage | roles.manage | permissions.manage | role-permissions.manage)
 *                   the collections, in the profile's dialect
 *
 * The edge profile's routes are in ./edge (its own audiences: public products, GraphQL).
 * Health, metrics and the docs are mounted for every profile elsewhere (health.ts, ../docs).
 * A new route goes into the group of its audience; it gets its authentication from the group.
 */
import type { HealthMonitor, Logger } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import type { Denylist } from '../auth/denylist';
import type { GatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';
import { anonymousAuthRoutes, loginRoute } from './auth/anonymous';
import { sessionRoutes } from './auth/session';
import { authenticated, requiring } from './audiences';
import { type CollectionSpec, type Dialect, collectionRoutes, compactDialect, fullDialect } from './collections/collection';
import { permissions, rolePermissions, roles, users } from './collections/resources';

export interface ProfileDeps {
  readonly upstreams: Upstreams;
  readonly authenticator: Authenticator;
  readonly denylist: Denylist;
  readonly rateLimits: GatewayConfig['rateLimits'];
  readonly graphql: GatewayConfig['graphql'];
  readonly health: HealthMonitor;
  readonly logger: Logger;
}

type Mounted = Array<{ spec: CollectionSpec<unknown>; dialect: Dialect }>;

/** The Full profile (spec §4.2). */
export async function fullProfile(app: FastifyInstance, deps: ProfileDeps): Promise<void> {
  const u = deps.upstreams;
  loginRoute('/api/v1/auth/generate-jwt', deps)(app);
  anonymousAuthRoutes(deps)(app);
  await app.register(
    authenticated(deps.authenticator, async (ctx) => {
      sessionRoutes(deps)(ctx);
      await mountCollections(ctx, [
        { spec: users(u), dialect: fullDialect('/api/v1/users') },
        { spec: roles(u), dialect: fullDialect('/api/v1/roles') },
        { spec: permissions(u), dialect: fullDialect('/api/v1/permissions') },
        { spec: rolePermissions(u), dialect: fullDialect('/api/v1/role-permissions') },
      ] as Mounted);
    }),
  );
}

/** The Compact profile (spec §4.1): the same calls and policies under singular paths. */
export async function compactProfile(app: FastifyInstance, deps: ProfileDeps): Promise<void> {
  const u = deps.upstreams;
  loginRoute('/api/v1/generate-jwt', deps)(app);
  await app.register(
    authenticated(deps.authenticator, (ctx) =>
      mountCollections(ctx, [
        { spec: users(u), dialect: compactDialect('/api/v1/user') },
        { spec: roles(u), dialect: compactDialect('/api/v1/role') },
      ] as Mounted),
    ),
  );
}

async function mountCollections(ctx: FastifyInstance, collections: Mounted): Promise<void> {
  for (const { spec, dialect } of collections) await ctx.register(requiring(spec.permission, collectionRoutes(spec, dialect)));
}
