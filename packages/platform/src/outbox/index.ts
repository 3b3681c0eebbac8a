/**
 * Transactional outbox. A use case writes its events with `appendEvents(manager, …)` inside the
 * same transaction as its state change; the relay publishes them to the event bus afterwards
 * (woken by NOTIFY and by the bus's reconnect, polling as a fallback), so an event is never lost
 * when the bus is down and never published for a change that rolled back.
 */
import { randomUUID } from 'node:crypto';
import { type EventPayload, type EventSubject, encodeEvent } from '@iam/contracts';
import { Client } from 'pg';
import { Column, type DataSource, Entity, type EntityManager, Index, type MigrationInterface, PrimaryColumn, type QueryRunner } from 'typeorm';
import type { EventBus } from '../bus/port';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { BatchLoop } from '../batch-loop';
import { eventContextHeaders } from '../request-context';
import { activeTraceparent, withSpan } from '../trace';
import { pgErrorCode } from '../db';

@Entity({ name: 'outbox_events' })
@Index('ix_outbox_events_pending', ['occurredAt'], { where: '"published_at" IS NULL' })
export class OutboxEventRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  subject!: string;

  @Column('bytea')
  payload!: Buffer;

  @Column('text', { nullable: true })
  traceparent!: string | null;

  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt!: Date;

  @Column('timestamptz', { name: 'published_at', nullable: true })
  publishedAt!: Date | null;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  /** The request context the event was written in (request-context.ts), published as headers. */
  @Column('jsonb', { nullable: true })
  headers!: Record<string, string> | null;
}

/** Include in every service's migrations list (each service has its own database). */
export class CreateOutbox1763800000000 implements MigrationInterface {
  name = 'CreateOutbox1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "outbox_events" (
        "id" uuid PRIMARY KEY,
        "subject" text NOT NULL,
        "payload" bytea NOT NULL,
        "traceparent" text,
        "occurred_at" timestamptz NOT NULL,
        "published_at" timestamptz,
        "attempts" integer NOT NULL DEFAULT 0,
        "last_error" text
      )`);
    await q.query(`CREATE INDEX "ix_outbox_events_pending" ON "outbox_events" ("occurred_at") WHERE "published_at" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "outbox_events"');
  }
}

/**
 * The request context of each event (who, client IP, user agent), published as event headers.
 * Include in every service's migrations list, after CreateOutbox1763800000000.
 */
export class OutboxHeaders1764200000200 implements MigrationInterface {
  name = 'OutboxHeaders1764200000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "outbox_events" ADD COLUMN "headers" jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "outbox_events" DROP COLUMN "headers"');
  }
}

export const OUTBOX_CHANNEL = 'outbox_events';

export interface NewEvent<S extends EventSubject = EventSubject> {
  readonly subject: S;
  readonly payload: EventPayload<S>;
  /** Defaults to a fresh UUID. */
  readonly id?: string;
}

/** Typed constructor so the payload is checked against its subject. */
export function event<S extends EventSubject>(subject: S, payload: EventPayload<S>, id?: string): NewEvent {
  return { subject, payload, id };
}

/** Stores bound to one transaction, plus publishing events into that transaction's outbox. */
export type InTransaction<S> = S & { publish(events: readonly NewEvent[]): Promise<void> };

/** Runs work in one database transaction; events it publishes are written to the outbox in it. */
export interface UnitOfWork<S> {
  run<T>(fn: (tx: InTransaction<S>) => Promise<T>): Promise<T>;
}

/** A UnitOfWork over `ds` whose transactions see the stores `stores(manager)` builds. */
export function outboxUnitOfWork<S extends object>(ds: DataSource, stores: (m: EntityManager) => S): UnitOfWork<S> {
  return {
    run: async (fn) => {
      // A transaction PostgreSQL aborted to break a deadlock (or a serialization failure) did
      // nothing; it is run again, a few times, rather than surfacing as an internal error.
      for (let attempt = 1; ; attempt++) {
        try {
          return await ds.transaction((m) =>
            fn({
              ...stores(m),
              publish: async (events: readonly NewEvent[]) => {
                await appendEvents(m, events);
              },
            }),
          );
        } catch (err) {
          if (attempt >= 3 || !RETRYABLE_TX_ERRORS.has(pgErrorCode(err) ?? '')) throw err;
          await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
        }
      }
    },
  };
}

/** deadlock_detected, serialization_failure. */
const RETRYABLE_TX_ERRORS = new Set(['40P01', '40001']);

/**
 * Writes events in the caller's transaction and wakes the relay when it commits. Returns the ids.
 * An `outbox append` span covers it; its traceparent is stored with each row, so the publish
 * (and whoever consumes the event) continues this trace.
 */
export async function appendEvents(manager: EntityManager, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const subjects = [...new Set(events.map((e) => e.subject))];
  return withSpan('outbox append', { attributes: { 'messaging.destination.name': subjects.join(','), 'messaging.batch.message_count': events.length } }, async () => {
    const traceparent = activeTraceparent() ?? null;
    const context = eventContextHeaders();
    const headers = Object.keys(context).length > 0 ? context : null;
    const now = new Date();
    const rows = events.map((e) => ({
      id: e.id ?? randomUUID(),
      subject: e.subject,
      payload: Buffer.from(encodeEvent(e.subject, e.payload as never)),
      traceparent,
      headers,
      occurredAt: now,
    }));
    // The rows and the NOTIFY in one statement: one round trip to the database instead of two in
    // every transaction that publishes (a login's, a write's). At most 1,000 rows a statement
    // (6 parameters each; PostgreSQL takes 65,535).
    for (let from = 0; from < rows.length; from += 1_000) {
      const chunk = rows.slice(from, from + 1_000);
      const tuples = chunk.map((_, i) => `($${i * 6 + 1}::uuid, $${i * 6 + 2}, $${i * 6 + 3}::bytea, $${i * 6 + 4}, $${i * 6 + 5}::jsonb, $${i * 6 + 6}::timestamptz)`);
      await manager.query(
        `WITH appended AS (INSERT INTO outbox_events (id, subject, payload, traceparent, headers, occurred_at) VALUES ${tuples.join(', ')} RETURNING 1)
         SELECT pg_notify('${OUTBOX_CHANNEL}', '') FROM (SELECT count(*) FROM appended) AS done`,
        chunk.flatMap((r) => [r.id, r.subject, r.payload, r.traceparent, r.headers === null ? null : JSON.stringify(r.headers), r.occurredAt]),
      );
    }
    return rows.map((r) => r.id);
  });
}

export interface OutboxRelayOptions {
  readonly dataSource: DataSource;
  /** Same database as the data source; used for the LISTEN connection. */
  readonly databaseUrl: string;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly service: string;
  readonly batchSize?: number;
  /** Fallback poll interval when no NOTIFY arrives (ms, default 1000). */
  readonly pollMs?: number;
  /** Published rows older than this are deleted (ms, default 7 days). */
  readonly retentionMs?: number;
  /** How often the backlog (count, oldest age) is measured (ms, default 2000). */
  readonly backlogIntervalMs?: number;
}

export interface OutboxBacklog {
  readonly pending: number;
  readonly oldestAgeSeconds: number;
}

/**
 * Publishes pending outbox rows in order. Rows are claimed with FOR UPDATE SKIP LOCKED, so
 * replicas share the work without publishing a row twice at once; a row whose publish fails
 * stays pending and is retried with backoff.
 */
export class OutboxRelay {
  private readonly loop: BatchLoop;
  private listening: Promise<void> | undefined;
  private listener: Client | undefined;
  private unwatchBus: (() => void) | undefined;
  private running = false;
  private lastCleanup = 0;
  private lastBacklog = 0;
  private backlogValue: OutboxBacklog = { pending: 0, oldestAgeSeconds: 0 };

  constructor(private readonly opts: OutboxRelayOptions) {
    this.loop = new BatchLoop({
      name: 'outbox relay',
      work: async () => {
        const published = await this.publishBatch();
        await this.cleanup();
        return published;
      },
      batchSize: opts.batchSize ?? 100,
      pollMs: opts.pollMs ?? 1_000,
      logger: opts.logger,
      after: () => this.measureBacklog(),
      // A NOTIFY (a new event) or the bus's reconnect tries again at once, even while publishing
      // has been failing.
      nudgeDuringBackoff: true,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.listening = this.listen();
    // The bus is back: what piled up while it was down goes now, not after the backoff (up to 5 s).
    this.unwatchBus = this.opts.bus.onReconnect(() => this.nudge());
    this.loop.start();
  }

  /** Publishes soon: now if the relay is sleeping, right after the current batch otherwise. */
  private nudge(): void {
    this.loop.nudge();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unwatchBus?.();
    this.unwatchBus = undefined;
    await this.loop.stop();
    await this.listener?.end().catch(() => undefined);
    await this.listening;
    this.listener = undefined;
  }

  /** Events not yet published and the age of the oldest (measured every couple of seconds). */
  backlog(): OutboxBacklog {
    return this.backlogValue;
  }

  private async publishBatch(): Promise<number> {
    const limit = this.opts.batchSize ?? 100;
    let failure: Error | undefined;
    const published = await this.opts.dataSource.transaction(async (m) => {
      const rows: Array<{ id: string; subject: string; payload: Buffer; traceparent: string | null; headers: Record<string, string> | null; occurred_at: Date }> = await m.query(
        `SELECT id, subject, payload, traceparent, headers, occurred_at FROM outbox_events
          WHERE published_at IS NULL ORDER BY occurred_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      const done: string[] = [];
      for (const r of rows) {
        try {
          await this.opts.bus.publish({
            id: r.id,
            subject: r.subject,
            data: r.payload,
            occurredAt: r.occurred_at,
            traceparent: r.traceparent ?? undefined,
            headers: r.headers ?? undefined,
          });
        } catch (err) {
          // Keep the order: stop at the first failure, remember why, retry later.
          failure = err instanceof Error ? err : new Error(String(err));
          await m.query('UPDATE outbox_events SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [r.id, failure.message.slice(0, 500)]);
          break;
        }
        done.push(r.id);
        this.opts.metrics.eventsPublished.inc({ subject: r.subject });
      }
      if (done.length > 0) await m.query('UPDATE outbox_events SET published_at = now() WHERE id = ANY($1::uuid[])', [done]);
      return done.length;
    });
    if (failure) throw failure;
    return published;
  }

  private async cleanup(): Promise<void> {
    if (Date.now() - this.lastCleanup < 60_000) return;
    this.lastCleanup = Date.now();
    const retention = this.opts.retentionMs ?? 7 * 24 * 3600_000;
    await this.opts.dataSource.query(
      `DELETE FROM outbox_events WHERE published_at IS NOT NULL AND published_at < now() - ($1::bigint * interval '1 millisecond')`,
      [retention],
    );
  }

  private async measureBacklog(): Promise<void> {
    if (Date.now() - this.lastBacklog < (this.opts.backlogIntervalMs ?? 2_000)) return;
    this.lastBacklog = Date.now();
    const [row] = await this.opts.dataSource.query<[{ n: number; age: number }]>(
      `SELECT count(*)::int AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(occurred_at)), 0)::float8 AS age
         FROM outbox_events WHERE published_at IS NULL`,
    );
    this.backlogValue = { pending: row.n, oldestAgeSeconds: Math.max(0, Math.round(row.age * 10) / 10) };
    this.opts.metrics.outboxPending.set({ service: this.opts.service }, row.n);
    this.opts.metrics.outboxOldestAge.set({ service: this.opts.service }, this.backlogValue.oldestAgeSeconds);
  }

  /** LISTEN on a dedicated connection; reconnects while the relay runs. */
  private async listen(): Promise<void> {
    while (this.running) {
      const client = new Client({ connectionString: this.opts.databaseUrl, connectionTimeoutMillis: 3_000 });
      client.on('error', () => undefined); // an unhandled 'error' would crash the process
      try {
        await client.connect();
        if (this.running) {
          this.listener = client;
          client.on('notification', () => this.nudge());
          await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
          // Whatever was written before LISTEN took effect goes now.
          this.nudge();
          await new Promise<void>((resolve) => {
            client.on('error', () => resolve());
            client.once('end', () => resolve());
          });
        }
      } catch {
        // retried below; polling covers the gap
      } finally {
        this.listener = undefined;
        await client.end().catch(() => undefined);
      }
      for (let i = 0; i < 10 && this.running; i++) await new Promise((r) => setTimeout(r, 100));
    }
  }
}
