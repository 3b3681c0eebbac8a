/** Delivery records in PostgreSQL. */
import type { DataSource } from 'typeorm';
import type { Delivery, DeliveryStatus, DeliveryStore } from '../domain/ports';

interface Row {
  event_id: string;
  subject: string;
  kind: string;
  recipient: string;
  status: DeliveryStatus;
  attempts: number;
  last_error: string;
  created_at: Date;
  updated_at: Date;
}

const toDelivery = (r: Row): Delivery => ({
  eventId: r.event_id,
  subject: r.subject,
  kind: r.kind,
  recipient: r.recipient,
  status: r.status,
  attempts: r.attempts,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * One statement: `prev` is the record as it was (the statement's snapshot), `claimed` the attempt
 * it starts, if it may. A record in 'pending' was written by a process from before 'sending'
 * existed (a rolling upgrade) and is read as 'sending' since its last update.
 */
const BEGIN = `
  WITH prev AS (
    SELECT status, COALESCE(sending_since, updated_at) AS since FROM deliveries WHERE event_id = $1
  ), claimed AS (
    INSERT INTO deliveries AS d (event_id, subject, kind, recipient, status, attempts, sending_since)
    VALUES ($1, $2, $3, $4, 'sending', 1, now())
    ON CONFLICT (event_id) DO UPDATE SET status = 'sending', attempts = d.attempts + 1, sending_since = now(), updated_at = now()
     WHERE d.status IN ('retrying', 'dead_lettered')
        OR (d.status IN ('sending', 'pending') AND COALESCE(d.sending_since, d.updated_at) <= now() - $5::bigint * interval '1 millisecond')
    RETURNING attempts
  )
  SELECT c.attempts, p.status AS previous,
         CEIL(GREATEST(0, $5::bigint - EXTRACT(EPOCH FROM now() - p.since) * 1000))::int AS wait_ms
    FROM (VALUES (1)) AS one (x) LEFT JOIN claimed c ON true LEFT JOIN prev p ON true`;

export function pgDeliveries(ds: DataSource): DeliveryStore {
  return {
    async begin(d, staleAfterMs) {
      const [r] = await ds.query<[{ attempts: number | null; previous: string | null; wait_ms: number | null }]>(BEGIN, [
        d.eventId,
        d.subject,
        d.kind,
        d.recipient,
        Math.round(staleAfterMs),
      ]);
      const wasSending = r.previous === 'sending' || r.previous === 'pending';
      if (r.attempts !== null) return { outcome: 'send', attempt: r.attempts, resent: wasSending };
      if (r.previous === 'sent' || r.previous === 'recorded') return { outcome: 'done' };
      // In 'sending' for less than the limit; or changed by a concurrent attempt since the
      // snapshot (claimed or finished just now): either way, look again later.
      return { outcome: 'in_flight', retryInMs: wasSending && r.wait_ms ? r.wait_ms : staleAfterMs };
    },
    async finish(eventId, status) {
      await ds.query(`UPDATE deliveries SET status = $2, last_error = '', sending_since = NULL, sent_at = now(), updated_at = now() WHERE event_id = $1`, [eventId, status]);
    },
    async fail(eventId, attempt, error, final) {
      await ds.query(
        `UPDATE deliveries SET status = $3, last_error = $4, sending_since = NULL, updated_at = now()
          WHERE event_id = $1 AND attempts = $2 AND status = 'sending'`,
        [eventId, attempt, final ? 'dead_lettered' : 'retrying', error.slice(0, 1_000)],
      );
    },
    async get(eventId) {
      const [r] = await ds.query<Row[]>('SELECT * FROM deliveries WHERE event_id = $1', [eventId]);
      return r ? toDelivery(r) : null;
    },
    async list(q) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (q.status) {
        params.push(q.status);
        where.push(`status = $${params.length}`);
      }
      if (q.recipient) {
        params.push(q.recipient.trim().toLowerCase());
        where.push(`recipient = $${params.length}`);
      }
      const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const [{ n }] = await ds.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM deliveries ${w}`, params);
      params.push(q.pageSize, (q.page - 1) * q.pageSize);
      const rows = await ds.query<Row[]>(`SELECT * FROM deliveries ${w} ORDER BY created_at DESC, event_id LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
      return { items: rows.map(toDelivery), totalCount: n };
    },
  };
}
