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
import { authPlugin } from './plugins/auth';
import { fullProfile } from './routes/full';
import type { Upstreams } from './upstreams';
import { errorsPlugin } from './plugins/errors';
import { metricsPlugin } from './plugins/metrics';
import { tracePlugin } from './plugins/trace';
import { installValidators } from './plugins/validation';
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

  await app.register(healthRoutes, { health: deps.health, metrics: deps.metrics });
  for (const profile of deps.config.profiles) {
    if (profile === 'full') {
      const { upstreams, authenticator, denylist } = required(deps);
      await app.register(fullProfile, { upstreams, authenticator, denylist, limits: deps.config.rateLimits });
    } else {
      deps.logger.warn({ profile }, 'profile is not available in this build yet; its routes are not mounted');
    }
  }
  return app;
}

function required(deps: AppDeps): Required<Pick<AppDeps, 'upstreams' | 'authenticator' | 'denylist'>> {
  if (!deps.upstreams || !deps.authenticator || !deps.denylist) throw new Error('the API profiles need upstreams, an authenticator and a denylist');
  return { upstreams: deps.upstreams, authenticator: deps.authenticator, denylist: deps.denylist };
}
