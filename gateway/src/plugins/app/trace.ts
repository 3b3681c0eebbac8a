/**
 * Every request is an OpenTelemetry server span: it continues a valid `traceparent`, else a valid
 * `X-Trace-Id` names the new trace, else a new trace starts; anything malformed is ignored. The
 * route, the upstream calls and the logs run inside it. Every response, errors and 404s
 * included, carries X-Trace-Id: the span's trace id.
 */
import { type Span, SpanKind, SpanStatusCode, type TraceContext, extractContext, runInContext, startSpan } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyRequest {
    trace: TraceContext;
  }
}

const spans = new WeakMap<object, Span>();

export const tracePlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('trace', undefined as unknown as TraceContext);
    app.addHook('onRequest', (req, reply, done) => {
      const route = req.routeOptions?.url;
      const { span, ctx } = startSpan(
        route ? `${req.method} ${route}` : req.method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': req.method,
            'url.path': (req.url ?? '/').split('?')[0] ?? '/',
            'url.scheme': req.protocol,
            'iam.service': 'gateway',
            ...(route ? { 'http.route': route } : {}),
          },
        },
        extractContext((name) => req.headers[name], { traceIdHeader: true }),
      );
      spans.set(req, span);
      const sc = span.spanContext();
      req.trace = { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags.toString(16).padStart(2, '0') };
      reply.header('x-trace-id', sc.traceId);
      runInContext(ctx, done);
    });
    const end = (req: object, status?: number): void => {
      const span = spans.get(req);
      if (!span) return;
      spans.delete(req);
      if (status !== undefined) {
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      } else {
        span.setAttribute('error.type', 'aborted');
      }
      span.end();
    };
    app.addHook('onResponse', (req, reply, done) => {
      end(req, reply.statusCode);
      done();
    });
    app.addHook('onRequestAbort', (req, done) => {
      end(req);
      done();
    });
  },
  { name: 'iam-trace' },
);
