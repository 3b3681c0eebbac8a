/**
 * Routes are grouped by audience in encapsulated contexts, and authentication is registered once
 * per context, before any of its routes: a route added to an authenticated group cannot become
 * public by forgetting a hook. Anonymous routes are registered outside these contexts.
 *
 *   authenticated(auth, routes)     a valid bearer token (401 otherwise)
 *   requiring(permission, routes)   inside authenticated: the permission, or Administrator (403)
 *   requiringAdministrator(routes)  inside authenticated: the Administrator role itself (403)
 *   optionallyAuthenticated(auth, routes)
 *                                   a bearer token is optional, a present one must be valid (401);
 *                                   for routes whose fields decide who may do what (GraphQL)
 *
 * The contexts also document their routes: the bearer scheme and the 401 / 403 problems.
 */
import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import { authenticate, authenticateIfPresent, requireAdministrator, requirePermission } from '../plugins/app/auth';
import { problems } from '../schemas/common';

/** Registers the context's routes (route plugins, with their options). */
type Routes = (ctx: FastifyInstance) => PromiseLike<unknown> | void;

function documented(statuses: number[], optional = false) {
  return (route: RouteOptions): void => {
    // In place: the profile's route catalog (a parent onRoute hook) already holds this schema.
    if (!route.schema || route.schema.hide) return;
    // OpenAPI: an empty requirement makes the scheme optional.
    route.schema.security = optional ? [{}, { bearer: [] }] : [{ bearer: [] }];
    route.schema.response = { ...problems(...statuses), ...(route.schema.response as Record<string, unknown> | undefined) };
  };
}

export function authenticated(auth: Authenticator, routes: Routes): FastifyPluginAsync {
  return async (ctx) => {
    ctx.addHook('onRoute', documented([401]));
    ctx.addHook('onRequest', authenticate(auth));
    await routes(ctx);
  };
}

/** The principal is set when a valid bearer token comes, null without one; an invalid one is 401. Resolvers check per field. */
export function optionallyAuthenticated(auth: Authenticator, routes: Routes): FastifyPluginAsync {
  return async (ctx) => {
    ctx.addHook('onRoute', documented([401], true));
    ctx.addHook('onRequest', authenticateIfPresent(auth));
    await routes(ctx);
  };
}

/** Safe outside `authenticated` too: without a verified principal the hook answers 401. */
export function requiring(permission: string, routes: Routes): FastifyPluginAsync {
  return async (ctx) => {
    ctx.addHook('onRoute', documented([401, 403]));
    ctx.addHook('onRequest', requirePermission(permission));
    await routes(ctx);
  };
}

/** Safe outside `authenticated` too: without a verified principal the hook answers 401. */
export function requiringAdministrator(routes: Routes): FastifyPluginAsync {
  return async (ctx) => {
    ctx.addHook('onRoute', documented([401, 403]));
    ctx.addHook('onRequest', requireAdministrator());
    await routes(ctx);
  };
}
