/** HTTP latency histogram by method, route template and status; /metrics serves the registry. */
import type { Metrics } from '@iam/platform/core';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const metricsPlugin = fp(
  async (app: FastifyInstance, opts: { metrics: Metrics }) => {
    app.addHook('onResponse', (req, reply, done) => {
      opts.metrics.httpDuration.observe(
        { method: req.method, route: req.routeOptions?.url ?? 'unmatched', status_code: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
      done();
    });
  },
  { name: 'iam-metrics' },
);
