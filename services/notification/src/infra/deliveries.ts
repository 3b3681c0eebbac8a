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

export function pgDeliveries(ds: DataSource): DeliveryStore {
  return {
    async begin(d) {
      const rows = await ds.query<unknown[]>(
        `INSERT INTO deliveries AS d (event_id, subject, kind, recipient, status, attempts) VALUES ($1, $2, $3, $4, 'pending', 1)
         ON CONFLICT (event_id) DO UPDATE SET attempts = d.attempts + 1, updated_at = now()
          WHERE d.status NOT IN ('sent', 'recorded')
         RETURNING status`,
        [d.eventId, d.subject, d.kind, d.recipient],
      );
      return rows.length > 0;
    },
    async finish(eventId, status) {
      await ds.query(`UPDATE deliveries SET status = $2, last_error = '', sent_at = now(), updated_at = now() WHERE event_id = $1`, [eventId, status]);
    },
    async fail(eventId, error, final) {
      await ds.query(`UPDATE deliveries SET status = $2, last_error = $3, updated_at = now() WHERE event_id = $1`, [
        eventId,
        final ? 'dead_lettered' : 'retrying',
        error.slice(0, 1_000),
      ]);
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
