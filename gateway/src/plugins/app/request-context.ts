/**
 * Every request opens a request context (@iam/platform request-context): its client IP (Fastify's
 * `req.ip`, which honours TRUST_PROXY) and user agent, and, once the token is verified (auth.ts),
 * its `sub`. Upstream calls carry it as metadata and the services' events as headers, so the
 * audit trail records who did what from where. Records only: authorization never reads it.
 */
import { withRequestContext } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const requestContextPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (req, _reply, done) => {
      const ua = req.headers['user-agent'];
      withRequestContext({ clientIp: req.ip, userAgent: typeof ua === 'string' ? ua : undefined }, done);
    });
  },
  { name: 'iam-request-context', dependencies: ['iam-trace'] },
);
