/**
 * Health and metrics, mounted in every profile (Minimal included).
 *   /health         → {status: "ok", timestamp}            (the process serves)
 *   /health/live    → {status: "ok", timestamp}            (liveness: no dependency checked)
 *   /health/ready   → 200 / 503 {status, checks?, timestamp} (JWKS loaded, the mounted profiles'
 *                                                            upstreams serving; `checks` names every
 *                                                            component, also those only reported,
 *                                                            unless an ops port shows them instead)
 *   /api/v1/health  → 200 / 503 {status, db, nats, timestamp} (legacy, kept for existing clients;
 *                                                            503 also when a database is down; nats
 *                                                            is detail only; Minimal: {status, timestamp})
 *   /metrics        → Prometheus text format
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { HealthMonitor, Metrics } from '@iam/platform/core';
import { Type } from '@sinclair/typebox';

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const Status = Type.Object({ status: Type.String(), timestamp: Timestamp });
const UpDown = Type.Union([Type.Literal('up'), Type.Literal('down')]);
const Ready = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Optional(Type.Record(Type.String(), UpDown)),
  timestamp: Timestamp,
});
const LegacyHealth = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  db: UpDown,
  nats: Type.Optional(Type.Union([Type.Literal('up'), Type.Literal('down')], { description: 'NATS, as the gateway and the services see it; detail only: events wait in the outboxes while it is down' })),
  timestamp: Timestamp,
});

const MinimalHealth = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]), timestamp: Timestamp });

export interface HealthRoutesOptions {
  readonly health: HealthMonitor;
  readonly metrics: Metrics;
  readonly minimal: boolean;
  /** Show `checks` on /health/ready (false when an ops port does). */
  readonly namesComponents?: boolean;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, opts) => {
  const now = (): string => new Date().toISOString();
  const ok = async () => ({ status: 'ok', timestamp: now() });

  app.get('/health', { schema: { response: { 200: Status } } }, ok);
  app.get('/health/live', { schema: { response: { 200: Status } } }, ok);

  app.get('/health/ready', { schema: { response: { 200: Ready, 503: Ready } } }, async (_req, reply) => {
    const s = opts.health.snapshot();
    const checks = opts.namesComponents === false ? {} : { checks: s.checks };
    return reply.code(s.ready ? 200 : 503).send({ status: s.ready ? 'ready' : 'unavailable', ...checks, timestamp: now() });
  });

  if (opts.minimal) {
    app.get('/api/v1/health', { schema: { response: { 200: MinimalHealth, 503: MinimalHealth } } }, async (_req, reply) => {
      const s = opts.health.snapshot();
      return reply.code(s.ready ? 200 : 503).send({ status: s.ready ? 'ok' : 'unavailable', timestamp: now() });
    });
  } else {
    app.get('/api/v1/health', { schema: { response: { 200: LegacyHealth, 503: LegacyHealth } } }, async (_req, reply) => {
      const s = opts.health.snapshot();
      // Every service's database check (`<service>.db`), commerce's too when the edge profile is mounted.
      const entries = Object.entries(s.checks);
      // The databases of the services the gateway needs (`<service>.db` of a readiness upstream);
      // a service it can do without (audit, notification) counts only while it answers.
      const needed = (name: string): boolean => !s.informational.includes(name) || s.checks[name] === 'up';
      const dbUp = entries.every(([name, status]) => status === 'up' || !name.endsWith('.db') || !needed(name.slice(0, -3)));
      // The gateway's own connection (`bus`) and that of each service that answers (`<service>.bus`).
      const natsUp = entries.every(([name, status]) => status === 'up' || !(name === 'bus' || (name.endsWith('.bus') && s.checks[name.slice(0, -4)] === 'up')));
      const ok = s.ready && dbUp;
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', db: dbUp ? 'up' : 'down', nats: natsUp ? 'up' : 'down', timestamp: now() });
    });
  }

  app.get('/metrics', { schema: { summary: 'Prometheus metrics (text format)', response: { 200: { type: 'string' } } } }, async (_req, reply) => {
    const text = await opts.metrics.registry.metrics();
    return reply.type(opts.metrics.registry.contentType).send(text);
  });
};
