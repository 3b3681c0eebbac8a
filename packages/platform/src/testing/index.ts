/**
 * Helpers for tests against real infrastructure: a fresh database per test file on the real
 * (or embedded) PostgreSQL, a JetStream bus in a private namespace (or the in-process bus when
 * no NATS is reachable), a silent logger. The jest global setup decides what is reachable.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { InMemoryEventBus } from '../bus/memory';
import { JetStreamEventBus } from '../bus/jetstream';
import type { EventBus } from '../bus/port';
import { quoteIdent } from '../db';
import type { Logger } from '../logger';
import { createMetrics, type Metrics } from '../metrics';

export function testLogger(): Logger {
  return pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
}

export function testMetrics(): Metrics {
  return createMetrics({ defaultMetrics: false });
}

/** Admin URL of the PostgreSQL the tests use. */
export function testPgUrl(): string {
  const url = process.env.IAM_TEST_PG_URL;
  if (!url) throw new Error('IAM_TEST_PG_URL is not set: run tests through jest (global setup)');
  return url;
}

/** URL of a reachable NATS JetStream server, or undefined. */
export function testNatsUrl(): string | undefined {
  return process.env.IAM_TEST_NATS_URL || undefined;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * Gateway settings for tests that are not about load shedding: a test machine's stalls (other
 * suites on the same cores, schema compilation at start) are not load to shed (the harness does
 * the same; plugins/external tests shedding itself).
 */
export const NO_SHEDDING = { MAX_EVENT_LOOP_DELAY_MS: '0' } as const;

/** Runs one statement as the test server's superuser (roles, ownership, grants). */
export async function asSuperuser(sql: string): Promise<void> {
  const c = new Client({ connectionString: testPgUrl() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** `url` connecting as `role` (no password: the test server trusts local connections). */
export function urlAsRole(url: string, role: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = '';
  return u.toString();
}

/** Creates an empty database; `drop()` removes it (terminating leftover connections). */
export async function createTestDatabase(prefix = 'iam_test'): Promise<TestDatabase> {
  // IAM_TEST_DB_PREFIX: sessions sharing one PostgreSQL tell their databases apart (e.g. `dx_`).
  const name = uniqueName(`${process.env.IAM_TEST_DB_PREFIX ?? ''}${prefix}`).toLowerCase();
  const admin = new Client({ connectionString: testPgUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  } finally {
    await admin.end();
  }
  const u = new URL(testPgUrl());
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    drop: async () => {
      const c = new Client({ connectionString: testPgUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A JetStream bus in a private namespace when NATS is reachable, else the in-process bus. */
export function testBus(deps: { logger?: Logger; metrics?: Metrics } = {}): EventBus {
  const logger = deps.logger ?? testLogger();
  const metrics = deps.metrics ?? testMetrics();
  const url = testNatsUrl();
  return url
    ? new JetStreamEventBus({ url, name: 'test', logger, metrics, namespace: uniqueName('t') })
    : new InMemoryEventBus({ logger, metrics });
}

/** Polls `fn` until it returns a truthy value or the timeout passes. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 5_000, intervalMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = new Error('condition not met');
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw last;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Deletes every stream of a test namespace from the shared NATS server. */
export async function deleteNamespaceStreams(url: string, namespace: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = `${namespace.replace(/[^A-Za-z0-9_-]/g, '_').toUpperCase()}_`;
    for await (const name of jsm.streams.names()) if (name.startsWith(prefix)) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}

export { runEventBusContract, type BusFactory } from './bus-contract';
export { TcpRelay } from './tcp-relay';
export { startSmtpSink, actionToken, type SmtpSink, type ReceivedMail } from './smtp';
export { installTestTracing, parentSpan, spanPath, type ReadableSpan, type TestTracing } from './tracing';
export { describeSchemaContract, migratedTestDatabase, type MigratedDatabase } from './schema';
export { TestAccess, startAccessServer } from './access';
export { freePort } from './free-port';

export { TEST_CALL_KEY, actingAs, testSigner } from './calls';
export { SKIPS_DIR_ENV, type Skip, recordSkip, skipSummary } from './skips';
export { CHROMIUM, CHROMIUM_INSTALL, browserTestsRunnable, hasChromium } from './browser';
export { type ReceivedWebhook, type ReceiverAnswer, type WebhookReceiver, startWebhookReceiver } from './webhook-receiver';
