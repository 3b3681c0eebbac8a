/**
 * Writing events into the outbox, in the caller's transaction: typed events (`event`), and
 * `appendEvents`, which inserts them and wakes the relay (NOTIFY) in one statement.
 */
import { randomUUID } from 'node:crypto';
import { type EventPayload, type EventSubject, encodeEvent } from '@iam/contracts';
import type { EntityManager } from 'typeorm';
import { eventContextHeaders } from '../request-context';
import { activeTraceparent, withSpan } from '../trace';

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
