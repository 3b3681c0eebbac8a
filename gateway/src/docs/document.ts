/**
 * A profile's OpenAPI document without a running system: the gateway app built in memory (no
 * upstreams, nothing listens) and its /docs/<profile>/openapi.json read. For code generated from
 * the API (console/scripts/gen-api.mjs writes the console's types from the Full profile's).
 */
import { HealthMonitor, createLogger, createMetrics, readConfig } from '@iam/platform/core';
import { buildApp } from '../app';
import { Denylist } from '../auth/denylist';
import { type Profile, readGatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';

export async function openApiDocument(profile: Profile, opts: { devMailbox?: boolean } = {}): Promise<Record<string, unknown>> {
  // No load shedding: on a busy machine a stalled event loop would answer the document's own request 503.
  const config = readConfig({ GATEWAY_PROFILES: profile, MAX_EVENT_LOOP_DELAY_MS: '0' }, readGatewayConfig);
  const logger = createLogger({ level: 'silent', service: 'openapi' });
  const app = await buildApp({
    config,
    logger,
    metrics: createMetrics({ defaultMetrics: false }),
    health: new HealthMonitor({ logger, checks: {} }),
    // Only the routes' schemas are read: no call is ever made.
    upstreams: new Proxy({}, { get: () => ({}) }) as Upstreams,
    authenticator: { verify: () => Promise.reject(new Error('no requests are made')) },
    denylist: new Denylist(),
    // The console's generated types include the development mailbox's routes (make run only); the
    // documents a gateway serves list them only where they exist.
    devMailbox: opts.devMailbox ? { capacity: 1, list: () => [], get: () => undefined } : undefined,
  });
  try {
    await app.ready();
    return (await app.inject({ url: `/docs/${profile}/openapi.json` })).json<Record<string, unknown>>();
  } finally {
    await app.close();
  }
}
