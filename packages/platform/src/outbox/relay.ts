/**
 * The outbox relay: publishes pending outbox rows to the event bus in order, woken by NOTIFY and by
 * the bus's reconnect (polling as a fallback), so an event is never lost when the bus is down.
 */
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import type { EventBus } from '../bus/port';
import { BatchLoop } from '../batch-loop';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { OUTBOX_CHANNEL } from './append';

export interface OutboxRelayOptions {
  readonly dataSource: DataSource;
  /** Same database as the data source; used for the LISTEN connection. */
  readonly databaseUrl: string;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly service: string;
  readonly batchSize?: number;
  /**
   * Fallback poll interval when no NOTIFY arrives (ms): by default 1000 while the LISTEN connection
   * is down and LISTENING_POLL_MS while it is up (a NOTIFY wakes the relay for every new event;
   * the poll only finds rows another relay's lapsed lease left). A value given is used for both.
   */
  readonly pollMs?: number;
  /** Published rows older than this are deleted (ms, default 7 days). */
  readonly retentionMs?: number;
  /** How often the backlog (count, oldest age) is measured (ms, default 2000). */
  readonly backlogIntervalMs?: number;
  /** How long a claimed row stays this relay's (ms, default OUTBOX_LEASE_MS). */
  readonly leaseMs?: number;
}

/** How long a claimed row is a relay's (ms): past it, another relay may claim it. */
export const OUTBOX_LEASE_MS = 15_000;

/**
 * The fallback poll while LISTEN is up (ms): at rest a relay then wakes every 10 s, not every
 * second (issue #43: idle CPU), and rows a dead relay held wait at most its lease plus this.
 */
export const LISTENING_POLL_MS = 10_000;

interface OutboxRow {
  id: string;
  subject: string;
  payload: Buffer;
  traceparent: string | null;
  headers: Record<string, string> | null;
  occurred_at: Date;
}

export interface OutboxBacklog {
  readonly pending: number;
  readonly oldestAgeSeconds: number;
}

/**
 * Publishes pending outbox rows in order. Rows are claimed with a lease (SKIP LOCKED while
 * claiming), so replicas share the work without publishing a row twice at once; a row whose
 * publish fails stays pending and is retried with backoff.
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
      pollMs: opts.pollMs ?? (() => (this.listener ? LISTENING_POLL_MS : 1_000)),
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

  /**
   * One batch in two statements and no transaction held across the publish: claim (lease) the
   * oldest pending rows no other relay holds, publish them (pipelined, in order), then mark the
   * published ones and release the rest. A relay that dies between the two leaves its rows to
   * whichever relay claims them after the lease; the bus drops a second publish of an id.
   */
  private async publishBatch(): Promise<number> {
    const limit = this.opts.batchSize ?? 100;
    // The claim is a CTE so that the statement is a SELECT: its rows come back ordered.
    const rows: OutboxRow[] = await this.opts.dataSource.query(
      `WITH claimed AS (
         UPDATE outbox_events o SET lease_until = now() + ($2::int * interval '1 millisecond')
           FROM (SELECT id FROM outbox_events
                  WHERE published_at IS NULL AND (lease_until IS NULL OR lease_until < now())
                  ORDER BY occurred_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) c
          WHERE o.id = c.id
          RETURNING o.id, o.subject, o.payload, o.traceparent, o.headers, o.occurred_at)
       SELECT * FROM claimed ORDER BY occurred_at, id`,
      [limit, this.opts.leaseMs ?? OUTBOX_LEASE_MS],
    );
    if (rows.length === 0) return 0;
    // Sent back to back on one connection, so the bus receives them in order; the first failure
    // ends the batch (what follows it stays pending, even if it reached the bus: a republish of an
    // id is dropped by the bus's de-duplication).
    const outcomes = await Promise.allSettled(
      rows.map((r) =>
        this.opts.bus.publish({
          id: r.id,
          subject: r.subject,
          data: r.payload,
          occurredAt: r.occurred_at,
          traceparent: r.traceparent ?? undefined,
          headers: r.headers ?? undefined,
        }),
      ),
    );
    const firstFailed = outcomes.findIndex((o) => o.status === 'rejected');
    const done = firstFailed === -1 ? rows : rows.slice(0, firstFailed);
    const failedRow = firstFailed === -1 ? undefined : rows[firstFailed];
    const failedOutcome = firstFailed === -1 ? undefined : outcomes[firstFailed];
    const failure = failedOutcome?.status === 'rejected' ? (failedOutcome.reason instanceof Error ? failedOutcome.reason : new Error(String(failedOutcome.reason))) : undefined;
    await this.opts.dataSource.query(
      `UPDATE outbox_events
          SET published_at = CASE WHEN id = ANY($2::uuid[]) THEN now() END,
              lease_until = NULL,
              attempts = attempts + CASE WHEN id = $3::uuid THEN 1 ELSE 0 END,
              last_error = CASE WHEN id = $3::uuid THEN $4 ELSE last_error END
        WHERE id = ANY($1::uuid[])`,
      [rows.map((r) => r.id), done.map((r) => r.id), failedRow?.id ?? null, failure?.message.slice(0, 500) ?? null],
    );
    for (const r of done) this.opts.metrics.eventsPublished.inc({ subject: r.subject });
    if (failure) throw failure;
    return done.length;
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
        const wasListening = this.listener !== undefined;
        this.listener = undefined;
        await client.end().catch(() => undefined);
        // Back to the short poll now, not after the long sleep the relay may be in.
        if (wasListening && this.running) this.nudge();
      }
      for (let i = 0; i < 10 && this.running; i++) await new Promise((r) => setTimeout(r, 100));
    }
  }
}
