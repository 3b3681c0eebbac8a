/**
 * Third-party plugins, registered in one place and in this order: security headers (helmet, API
 * settings: no CSP on JSON, the docs page sets its own; no HSTS, which ../app/hsts.ts sends over
 * https only), CORS by allow-list, load shedding
 * (./load-shedding.ts: a stalled event loop answers 503 + Retry-After instead of queueing), and the
 * rate limiter (routes opt in), and @fastify/swagger, which documents every route registered after
 * it (the UI is mounted with the docs routes). Our own plugins are in ../app.
 */
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import { AppError, type Logger, type Metrics } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../../config';
import { swaggerOptions } from '../../docs/openapi';
import { loadShedding } from './load-shedding';
import { rateLimitPlugin } from './rate-limit';

export async function externalPlugins(app: FastifyInstance, opts: { config: GatewayConfig; logger: Logger; metrics: Metrics }): Promise<void> {
  // HSTS is ours (plugins/app/hsts.ts): only over https, which helmet does not tell apart.
  await app.register(helmet, { global: true, contentSecurityPolicy: false, crossOriginEmbedderPolicy: false, strictTransportSecurity: false });
  if (opts.config.corsOrigins.length > 0) {
    const allowed = new Set(opts.config.corsOrigins);
    await app.register(cors, {
      // Another origin gets no CORS headers at all (the browser then refuses the response).
      origin: (origin, cb) => cb(null, origin !== undefined && allowed.has(origin)),
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'DPoP', 'Idempotency-Key', 'traceparent', 'X-Trace-Id'],
      // WWW-Authenticate: a browser app using DPoP reads why its proof was refused (RFC 9449 §7.1).
      exposedHeaders: ['X-Trace-Id', 'Location', 'Retry-After', 'WWW-Authenticate'],
      credentials: false,
      maxAge: 600,
      strictPreflight: true,
    });
  }
  if (opts.config.maxEventLoopDelayMs > 0) {
    loadShedding(app, {
      maxEventLoopDelayMs: opts.config.maxEventLoopDelayMs,
      onPressure: () => {
        throw new AppError('UNAVAILABLE', 'The gateway is overloaded; try again shortly.', { retryAfter: 2 });
      },
    });
  }
  await app.register(rateLimitPlugin, { redis: opts.config.redis, logger: opts.logger, metrics: opts.metrics });
  await app.register(swagger, swaggerOptions);
}
