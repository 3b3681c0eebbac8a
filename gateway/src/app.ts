/**
 * Builds the Fastify application (no listening), in the order of fastify/demo's app.ts:
 *   1. third-party plugins (plugins/external: helmet, CORS, load shedding, rate limits),
 *   2. our own (plugins/app: trace ids, problem+json errors, metrics, HSTS over https, authentication),
 *   3. routes: health and metrics in every profile, then each mounted profile's routes grouped by
 *      audience (routes/), then the docs.
 * Every route declares its schemas; responses are serialized from them, so no field outside a
 * schema can leave. A known path with another method answers 405 with `Allow`.
 */
import type { HealthMonitor, Logger, Metrics } from '@iam/platform/core';
import { AppError, newTraceId, toProblem } from '@iam/platform/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Authenticator } from './auth/authenticator';
import type { Denylist } from './auth/denylist';
import type { ReadCache } from './cache/read-cache';
import type { GatewayConfig, Profile } from './config';
import { RouteCatalog, profileDocument } from './docs/openapi';
import { docsRoutes } from './docs/routes';
import { authPlugin } from './plugins/app/auth';
import { errorsPlugin, sendProblem, toAppError } from './plugins/app/errors';
import { hstsPlugin } from './plugins/app/hsts';
import { metricsPlugin } from './plugins/app/metrics';
import { requestContextPlugin } from './plugins/app/request-context';
import { tracePlugin } from './plugins/app/trace';
import { installValidators } from './plugins/app/validation';
import { externalPlugins } from './plugins/external';
import { consoleRoutes } from './routes/console';
import type { DevMailbox } from './routes/dev-mailbox';
import { oidcRoutes } from './routes/oidc';
import { scimRoutes } from './routes/scim';
import { resourceMetadataRoutes, resourceMetadataUrl } from './routes/resource-metadata';
import { healthRoutes } from './routes/health';
import { type ProfileDeps, compactProfile, fullProfile } from './routes';
import { edgeProfile } from './routes/edge';
import type { Upstreams } from './upstreams';

/** DESIGN §2: JSON bodies up to 64 KiB. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Orchestrator probes and Prometheus scrapes, logged at debug. */
const PROBE_ROUTES = new Set(['/health', '/health/live', '/health/ready', '/metrics']);

export interface AppDeps {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly health: HealthMonitor;
  /** Needed by every profile but Minimal. */
  readonly upstreams?: Upstreams;
  readonly authenticator?: Authenticator;
  readonly denylist?: Denylist;
  /** Single-resource reads by id (absent: GATEWAY_READ_CACHE=false, or a test without one). */
  readonly readCache?: ReadCache;
  /** The development mailbox's routes are mounted (Full profile) only with one: the all-in-one's (gateway.ts). */
  readonly devMailbox?: DevMailbox;
}

const PROFILES: Partial<Record<Profile, { mount: (app: FastifyInstance, deps: ProfileDeps) => Promise<void>; version: string; description: string }>> = {
  full: {
    mount: fullProfile,
    version: '1.0.0',
    description: 'Plural resource paths, authentication under /api/v1/auth, pageSize, permission-based authorization, email actions, health probes.',
  },
  compact: {
    mount: compactProfile,
    version: '0.1.0',
    description: 'Singular resource paths (/api/v1/user, /api/v1/role), page_size, login at /api/v1/generate-jwt, health at /health.',
  },
  edge: {
    mount: edgeProfile,
    version: '1.0.0',
    description:
      'The storefront edge: /healthz, the public catalog (/api/v1/products, page_size and an opaque page_token), and POST /api/v1/graphql (products, cart, orders, checkout, product administration; the GraphQL schema by introspection).',
  },
};

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- TypeScript 7 (the compiler) needs it; the linter's 5.9 does not
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Our own access log (onResponse below) carries the route template and never headers.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: typeof deps.config.trustProxy === 'boolean' ? deps.config.trustProxy : [...deps.config.trustProxy],
    return503OnClosing: true,
    requestTimeout: 30_000,
    // A guard against a plugin that never resolves, not a performance budget: building the OpenAPI
    // documents and the GraphQL schema took over Fastify's 10 s default on a loaded 2-core machine
    // (make test beside other work), and the gateway then failed to start at all.
    pluginTimeout: 60_000,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // A URL the router refuses (bad percent-encoding, an over-long path parameter) never reaches
    // the error handler: answer it as problem+json with a trace id here (was Fastify's own JSON).
    frameworkErrors: (err, req, reply) => {
      void sendProblem(req, reply, toAppError(err));
    },
    // Malformed HTTP never reaches a route; answer it as problem+json with a trace id too.
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return;
      const traceId = newTraceId();
      const tooLarge = (err as { code?: string }).code === 'HPE_HEADER_OVERFLOW';
      const e = tooLarge ? new AppError('HEADERS_TOO_LARGE', 'The request headers are too large.') : AppError.validation('The request is not valid HTTP.');
      const body = JSON.stringify(toProblem(e, { instance: '/', traceId }));
      socket.end(
        `HTTP/1.1 ${e.httpStatus} ${e.title}\r\nContent-Type: application/problem+json\r\nX-Trace-Id: ${traceId}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });
  installValidators(app);
  app.removeContentTypeParser('text/plain');

  // 1. Third-party plugins. The trace plugin goes first so even their answers carry a trace id.
  await app.register(tracePlugin);
  await app.register(requestContextPlugin);
  // Every 401 names the API's protected-resource metadata (RFC 9728 §5.1), where an API profile is mounted.
  const resourceMetadata = deps.config.publicUrl && deps.config.profiles.length > 0 ? resourceMetadataUrl(deps.config.publicUrl) : undefined;
  await app.register(errorsPlugin, { logger: deps.logger, resourceMetadata });
  await externalPlugins(app, { config: deps.config, logger: deps.logger, metrics: deps.metrics });

  // 2. Our own plugins.
  await app.register(metricsPlugin, { metrics: deps.metrics });
  await app.register(hstsPlugin, { hsts: deps.config.hsts });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions?.url ?? 'unmatched';
    // Probes and scrapes come every few seconds: at debug, so they do not bury the requests (a
    // readiness change is logged by the health monitor as it happens).
    const level = PROBE_ROUTES.has(route) ? 'debug' : deps.config.requestLogLevel;
    deps.logger[level]({ method: req.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
    done();
  });
  await app.register(authPlugin);

  // 3. Routes; each profile's are recorded for its OpenAPI document (health and metrics are in all).
  const common = new RouteCatalog();
  await app.register(async (ctx) => {
    ctx.addHook('onRoute', common.onRoute);
    // With an ops port (GATEWAY_OPS_PORT), component names are shown only there.
    await ctx.register(healthRoutes, { health: deps.health, metrics: deps.metrics, minimal: deps.config.profiles.length === 0, namesComponents: !deps.config.opsPort });
  });
  const documents: Record<string, () => unknown> = {};
  const mounted = new Set<Profile>();
  for (const profile of deps.config.profiles) {
    const p = PROFILES[profile];
    if (!p) {
      deps.logger.warn({ profile }, 'profile is not available in this build yet; its routes are not mounted');
      continue;
    }
    const { upstreams, authenticator, denylist } = required(deps);
    if (profile === 'edge' && !upstreams.commerce) {
      deps.logger.warn({ profile }, 'no commerce service to call (COMMERCE_GRPC_TARGET); the edge routes are not mounted');
      continue;
    }
    const catalog = new RouteCatalog();
    await app.register(async (ctx) => {
      ctx.addHook('onRoute', catalog.onRoute);
      await p.mount(ctx, {
        upstreams,
        authenticator,
        denylist,
        rateLimits: deps.config.rateLimits,
        graphql: deps.config.graphql,
        health: deps.health,
        logger: deps.logger,
        readCache: deps.readCache,
        devMailbox: deps.devMailbox,
        publicUrl: deps.config.publicUrl,
      });
    });
    mounted.add(profile);
    const routes = new Set([...common.routes, ...catalog.routes]);
    documents[profile] = () => profileDocument(app.swagger() as Record<string, unknown>, routes, { title: `IAM API: ${profile} profile`, version: p.version, description: p.description });
  }
  if (Object.keys(documents).length > 0) await app.register(docsRoutes, { documents });
  // The OpenID provider: the Full profile's tokens, and the storefront's (an edge-only gateway
  // has no other way for a shopper to sign in: its apps use the provider's code flow).
  if (mounted.has('full') || mounted.has('edge')) {
    await app.register(oidcRoutes, { upstream: deps.config.upstreams.identityOp, rateLimits: deps.config.rateLimits, publicUrl: deps.config.publicUrl, timeoutMs: deps.config.identityOpTimeoutMs });
    const { upstreams } = required(deps);
    // SCIM 2.0 per organization (issue #42): its own tokens, its own media type and errors.
    if (mounted.has('full')) await app.register(scimRoutes, { upstreams, publicUrl: deps.config.publicUrl, limit: deps.config.rateLimits.scim });
    // The API's protected-resource metadata (RFC 9728): where its tokens come from.
    const publicUrl = deps.config.publicUrl;
    if (publicUrl) {
      await app.register(resourceMetadataRoutes, {
        publicUrl,
        permissionPage: async (page, pageSize) => (await upstreams.permissions.listPermissions({ page, pageSize, q: '', includeDeleted: false, cursor: '', sort: 'name' })).items.map((p) => p.name),
      });
    }
  }
  // The console needs the Full profile; GraphiQL (GRAPHQL_IDE) the edge's GraphQL endpoint.
  const withConsole = mounted.has('full');
  const withGraphiql = deps.config.graphql.ide && mounted.has('edge');
  if (withConsole || withGraphiql) {
    await app.register(consoleRoutes, {
      dir: deps.config.console.dir,
      devUrl: deps.config.console.devUrl,
      console: withConsole,
      graphiql: withGraphiql,
      hostedPages: withConsole,
      logger: deps.logger,
    });
  }
  return app;
}

function required(deps: AppDeps): Required<Pick<AppDeps, 'upstreams' | 'authenticator' | 'denylist'>> {
  if (!deps.upstreams || !deps.authenticator || !deps.denylist) throw new Error('the API profiles need upstreams, an authenticator and a denylist');
  return { upstreams: deps.upstreams, authenticator: deps.authenticator, denylist: deps.denylist };
}
