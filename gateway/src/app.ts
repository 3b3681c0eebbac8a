/**
 * Builds the Fastify application (no listening): our plugins in one place, then the route groups
 * of the mounted profiles. Every route declares its schemas; responses are serialized from them,
 * so no field outside a schema can leave.
 */
import type { HealthMonitor, Logger, Metrics } from '@iam/platform';
import { AppError, newTraceId, toProblem } from '@iam/platform';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Authenticator } from './auth/authenticator';
import type { Denylist } from './auth/denylist';
import type { GatewayConfig } from './config';
import { authPlugin } from './plugins/app/auth';
import { openApiDocument, RouteCatalog } from './docs/openapi';
import { docsRoutes } from './docs/routes';
import { rateLimit } from './plugins/rate-limit';
import { compactProfile } from './routes/compact';
import { fullProfile } from './routes/full';
import { Problem } from './schemas/common';
import type { Upstreams } from './upstreams';
import { errorsPlugin } from './plugins/app/errors';
import { metricsPlugin } from './plugins/app/metrics';
import { tracePlugin } from './plugins/app/trace';
import { installValidators } from './plugins/app/validation';
import { healthRoutes } from './routes/health';

/** DESIGN §2: JSON bodies up to 64 KiB. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface AppDeps {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly health: HealthMonitor;
  /** Needed by every profile but Minimal. */
  readonly upstreams?: Upstreams;
  readonly authenticator?: Authenticator;
  readonly denylist?: Denylist;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Our own access log (onResponse below) carries the route template and never headers.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: deps.config.trustProxy,
    return503OnClosing: true,
    requestTimeout: 30_000,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Malformed HTTP never reaches a route; answer it as problem+json with a trace id too.
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return;
      const traceId = newTraceId();
      const tooLarge = (err as { code?: string }).code === 'HPE_HEADER_OVERFLOW';
      const e = tooLarge ? new AppError('PAYLOAD_TOO_LARGE', 'The request headers are too large.') : AppError.validation('The request is not valid HTTP.');
      const body = JSON.stringify(toProblem(e, { instance: '/', traceId }));
      socket.end(
        `HTTP/1.1 ${e.httpStatus} ${e.title}\r\nContent-Type: application/problem+json\r\nX-Trace-Id: ${traceId}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });
  installValidators(app);
  app.removeContentTypeParser('text/plain');

  await app.register(tracePlugin);
  await app.register(errorsPlugin, { logger: deps.logger });
  await app.register(metricsPlugin, { metrics: deps.metrics });
  app.addHook('onResponse', (req, reply, done) => {
    deps.logger.info(
      { method: req.method, route: req.routeOptions?.url ?? 'unmatched', status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
    done();
  });

  await app.register(authPlugin);

  // Each profile's routes are recorded for its OpenAPI document; health and metrics are in all.
  const common = new RouteCatalog();
  await app.register(async (ctx) => {
    ctx.addHook('onRoute', common.onRoute);
    await ctx.register(healthRoutes, { health: deps.health, metrics: deps.metrics });
  });
  const limits = {
    login: rateLimit('login', deps.config.rateLimits.login),
    refresh: rateLimit('refresh', deps.config.rateLimits.refresh),
    emailActions: rateLimit('email-actions', deps.config.rateLimits.emailActions),
  };
  const documents: Record<string, () => unknown> = {};
  for (const profile of deps.config.profiles) {
    if (profile === 'edge') {
      deps.logger.warn({ profile }, 'profile is not available in this build yet; its routes are not mounted');
      continue;
    }
    const { upstreams, authenticator, denylist } = required(deps);
    const catalog = new RouteCatalog();
    await app.register(async (ctx) => {
      ctx.addHook('onRoute', catalog.onRoute);
      if (profile === 'full') await ctx.register(fullProfile, { upstreams, authenticator, denylist, limits });
      else await ctx.register(compactProfile, { upstreams, authenticator, limits });
    });
    documents[profile] = () =>
      openApiDocument({
        title: `IAM API: ${profile} profile`,
        version: profile === 'compact' ? '0.1.0' : '1.0.0',
        description: PROFILE_DESCRIPTIONS[profile] ?? '',
        routes: [...common.routes, ...catalog.routes],
        problem: Problem,
      });
  }
  if (Object.keys(documents).length > 0) await app.register(docsRoutes, { documents });
  return app;
}

const PROFILE_DESCRIPTIONS: Record<string, string> = {
  full: 'Plural resource paths, authentication under /api/v1/auth, pageSize, permission-based authorization, email actions, health probes.',
  compact: 'Singular resource paths (/api/v1/user, /api/v1/role), page_size, login at /api/v1/generate-jwt, health at /health.',
};

function required(deps: AppDeps): Required<Pick<AppDeps, 'upstreams' | 'authenticator' | 'denylist'>> {
  if (!deps.upstreams || !deps.authenticator || !deps.denylist) throw new Error('the API profiles need upstreams, an authenticator and a denylist');
  return { upstreams: deps.upstreams, authenticator: deps.authenticator, denylist: deps.denylist };
}
