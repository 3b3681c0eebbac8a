/**
 * Routes are grouped by audience in encapsulated contexts, and authentication is registered once
 * per context, before any of its routes: a route added to an authenticated group cannot become
 * public by forgetting a hook. Anonymous routes are registered outside these contexts.
 *
 *   authenticated(auth, routes)     a valid bearer token (401 otherwise)
 *   requiring(permission, routes)   inside authenticated: the permission, or Administrator (403)
 *
 * The contexts also document their routes: the bearer scheme and the 401 / 403 problems.
 */
import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import { authenticate, requirePermission } from '../plugins/app/auth';
import { problems } from '../schemas/common';

type Routes = (ctx: FastifyInstance) => Promise<void> | void;

function documented(statuses: number[]) {
  return (route: RouteOptions): void => {
    // In place: the profile's route catalog (a parent onRoute hook) already holds this schema.
    if (!route.schema) return;
    route.schema.security = [{ bearer: [] }];
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

/** Safe outside `authenticated` too: without a verified principal the hook answers 401. */
export function requiring(permission: string, routes: Routes): FastifyPluginAsync {
  return async (ctx) => {
    ctx.addHook('onRoute', documented([401, 403]));
    ctx.addHook('onRequest', requirePermission(permission));
    await routes(ctx);
  };
}
