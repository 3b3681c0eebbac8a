/**
 * Every request runs inside a trace context: continued from a valid `traceparent` or
 * `X-Trace-Id`, otherwise new. Every response, errors and 404s included, carries X-Trace-Id.
 */
import { type TraceContext, runWithTrace, traceFromCarrier } from '@iam/platform';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyRequest {
    trace: TraceContext;
  }
}

export const tracePlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('trace', undefined as unknown as TraceContext);
    app.addHook('onRequest', (req, reply, done) => {
      const ctx = traceFromCarrier((name) => req.headers[name]);
      req.trace = ctx;
      reply.header('x-trace-id', ctx.traceId);
      runWithTrace(ctx, done);
    });
  },
  { name: 'iam-trace' },
);
