/**
 * A service's small HTTP listener (`<SERVICE>_METRICS_PORT`, started by startService): its
 * /health/live, /health/ready and its own /metrics, for Kubernetes probes and Prometheus. (The
 * gateway serves these itself, with only its own metrics.)
 */
import { createServer, type Server } from 'node:http';
import type { HealthMonitor } from './health';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { newTraceId } from './trace';

export interface OpsServerHandle {
  readonly port: number;
  close(): Promise<void>;
}

export async function startOpsServer(opts: {
  host: string;
  port: number;
  health: HealthMonitor;
  metrics: Metrics;
  logger: Logger;
  /** More detail for /health/ready (e.g. the outbox backlog). */
  detail?: () => Record<string, unknown>;
}): Promise<OpsServerHandle> {
  const server: Server = createServer((req, res) => {
    res.setHeader('X-Trace-Id', newTraceId());
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { status: 405, title: 'Method Not Allowed' });
    if (path === '/health/live') return json(200, { status: 'ok', timestamp: new Date().toISOString() });
    if (path === '/health/ready') {
      const s = opts.health.snapshot();
      return json(s.ready ? 200 : 503, { status: s.ready ? 'ready' : 'unavailable', checks: s.checks, ...opts.detail?.(), timestamp: new Date().toISOString() });
    }
    if (path === '/metrics') {
      opts.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': opts.metrics.registry.contentType });
          res.end(text);
        },
        () => json(500, { status: 500, title: 'Internal Server Error' }),
      );
      return;
    }
    return json(404, { status: 404, title: 'Not Found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  opts.logger.info({ port }, 'ops HTTP server listening (health, metrics)');
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
