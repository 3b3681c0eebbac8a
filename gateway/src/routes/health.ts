/**
 * Health and metrics, mounted in every profile (Minimal included).
 *   /health         → {status: "ok", timestamp}            (the process serves)
 *   /health/live    → {status: "ok", timestamp}            (liveness: no dependency checked)
 *   /health/ready   → 200 / 503 {status, checks, timestamp} (every service, its database, NATS;
 *                                                            commerce with the edge profile)
 *   /api/v1/health  → 200 / 503 {status, db, timestamp}     (legacy, kept for existing clients;
 *                                                            Minimal profile: without db, spec §2)
 *   /metrics        → Prometheus text format
 */
import type { HealthMonitor, Metrics } from '@iam/platform/core';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const Status = Type.Object({ status: Type.String(), timestamp: Timestamp });
const Ready = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Record(Type.String(), Type.Union([Type.Literal('up'), Type.Literal('down')])),
  timestamp: Timestamp,
});
const LegacyHealth = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  db: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  timestamp: Timestamp,
});

const MinimalHealth = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]), timestamp: Timestamp });

export async function healthRoutes(app: FastifyInstance, opts: { health: HealthMonitor; metrics: Metrics; minimal: boolean }): Promise<void> {
  const now = (): string => new Date().toISOString();
  const ok = async () => ({ status: 'ok', timestamp: now() });

  app.get('/health', { schema: { response: { 200: Status } } }, ok);
  app.get('/health/live', { schema: { response: { 200: Status } } }, ok);

  app.get('/health/ready', { schema: { response: { 200: Ready, 503: Ready } } }, async (_req, reply) => {
    const s = opts.health.snapshot();
    return reply.code(s.ready ? 200 : 503).send({ status: s.ready ? 'ready' : 'unavailable', checks: s.checks, timestamp: now() });
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
      const dbUp = Object.entries(s.checks).every(([name, status]) => !name.endsWith('.db') || status === 'up');
      return reply.code(s.ready ? 200 : 503).send({ status: s.ready ? 'ok' : 'unavailable', db: dbUp ? 'up' : 'down', timestamp: now() });
    });
  }

  app.get('/metrics', { schema: { summary: 'Prometheus metrics (text format)', response: { 200: { type: 'string' } } } }, async (_req, reply) => {
    const text = await opts.metrics.registry.metrics();
    return reply.type(opts.metrics.registry.contentType).send(text);
  });
}
