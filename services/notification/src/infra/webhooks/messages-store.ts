/** Webhook messages and attempts in PostgreSQL: queueing (fan-out), listing, replays, retention. */
import type { Outcome } from '../../domain/delivery-policy';
import { type MessageStatus, type Page, type QueuedEvent, type WebhookAttempt, type WebhookMessage, webhookId } from '../../domain/webhooks';
import { type Queryable, returning } from './endpoints-store';

interface MessageRow {
  endpoint_id: string;
  id: string;
  event_type: string;
  status: MessageStatus;
  total_attempts: number;
  occurred_at: Date;
  next_attempt_at: Date;
  delivered_at: Date | null;
  payload: string;
  last_status_code: number | null;
  last_error: string;
}

const toMessage = (r: MessageRow): WebhookMessage => ({
  id: webhookId(r.id),
  endpointId: r.endpoint_id,
  eventType: r.event_type,
  status: r.status,
  attempts: r.total_attempts,
  occurredAt: r.occurred_at,
  nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
  deliveredAt: r.delivered_at,
  payload: r.payload,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
});

interface AttemptRow {
  message_id: string;
  event_type: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  outcome: Outcome;
  response: string;
  error: string;
}

export interface MessageStore {
  /**
   * Queues each event for every live, enabled endpoint subscribed to its type, in the events'
   * order (one statement: all or nothing); an event already queued for an endpoint is left as it
   * is (a redelivered event). Returns how many messages were queued.
   */
  fanOut(events: readonly QueuedEvent[]): Promise<number>;
  /** Queues one event for one endpoint, out of line (a test message: it neither waits nor holds others). */
  enqueueAside(endpointId: string, e: QueuedEvent): Promise<void>;
  list(endpointId: string, q: { page: number; pageSize: number; status?: MessageStatus; since?: Date; until?: Date }): Promise<Page<WebhookMessage>>;
  get(endpointId: string, eventId: string): Promise<WebhookMessage | null>;
  attempts(endpointId: string, q: { page: number; pageSize: number; eventId?: string }): Promise<Page<WebhookAttempt>>;
  /** Puts one message back in the queue (a new schedule, out of line); null when there is none. */
  replayOne(endpointId: string, eventId: string): Promise<WebhookMessage | null>;
  /** Puts every dead letter of the endpoint whose event occurred in [since, until) back in the queue. */
  replayDead(endpointId: string, since: Date, until: Date): Promise<number>;
  /** Removes delivered and dead messages (and their attempts) last changed before `before`. */
  purge(before: Date, limit: number): Promise<number>;
}

const MESSAGE_COLUMNS = 'endpoint_id, id, event_type, status, total_attempts, occurred_at, next_attempt_at, delivered_at, payload, last_status_code, last_error';

export function pgMessages(db: Queryable): MessageStore {
  return {
    async fanOut(events) {
      if (events.length === 0) return 0;
      const rows = await db.query<unknown[]>(
        `INSERT INTO webhook_messages (endpoint_id, id, event_type, occurred_at, payload)
         SELECT e.id, v.id, v.type, v.occurred_at, v.payload
           FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[]) WITH ORDINALITY AS v (id, type, occurred_at, payload, ord)
           JOIN webhook_endpoints e ON e.enabled AND e.deleted_at IS NULL AND (cardinality(e.event_types) = 0 OR v.type = ANY (e.event_types))
          ORDER BY v.ord, e.id
         ON CONFLICT (endpoint_id, id) DO NOTHING
         RETURNING 1`,
        [events.map((e) => e.eventId), events.map((e) => e.type), events.map((e) => e.occurredAt), events.map((e) => e.payload)],
      );
      return rows.length;
    },
    async enqueueAside(endpointId, e) {
      await db.query(`INSERT INTO webhook_messages (endpoint_id, id, event_type, occurred_at, payload, in_line) VALUES ($1, $2, $3, $4, $5, false)`, [
        endpointId,
        e.eventId,
        e.type,
        e.occurredAt,
        e.payload,
      ]);
    },
    async list(endpointId, q) {
      const where = ['endpoint_id = $1'];
      const params: unknown[] = [endpointId];
      if (q.status) where.push(`status = $${params.push(q.status)}`);
      if (q.since) where.push(`occurred_at >= $${params.push(q.since)}`);
      if (q.until) where.push(`occurred_at < $${params.push(q.until)}`);
      const w = where.join(' AND ');
      const [{ n }] = await db.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM webhook_messages WHERE ${w}`, params);
      params.push(q.pageSize, (q.page - 1) * q.pageSize);
      const rows = await db.query<MessageRow[]>(`SELECT ${MESSAGE_COLUMNS} FROM webhook_messages WHERE ${w} ORDER BY seq DESC LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
      return { items: rows.map(toMessage), totalCount: n };
    },
    async get(endpointId, eventId) {
      const [r] = await db.query<MessageRow[]>(`SELECT ${MESSAGE_COLUMNS} FROM webhook_messages WHERE endpoint_id = $1 AND id = $2`, [endpointId, eventId]);
      return r ? toMessage(r) : null;
    },
    async attempts(endpointId, q) {
      const params: unknown[] = [endpointId];
      const w = q.eventId ? `a.endpoint_id = $1 AND a.message_id = $${params.push(q.eventId)}` : 'a.endpoint_id = $1';
      const [{ n }] = await db.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM webhook_attempts a WHERE ${w}`, params);
      params.push(q.pageSize, (q.page - 1) * q.pageSize);
      const rows = await db.query<AttemptRow[]>(
        `SELECT a.message_id, m.event_type, a.attempt, a.started_at, a.duration_ms, a.status_code, a.outcome, a.response, a.error
           FROM webhook_attempts a JOIN webhook_messages m ON m.endpoint_id = a.endpoint_id AND m.id = a.message_id
          WHERE ${w} ORDER BY a.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
        params,
      );
      return {
        items: rows.map((r) => ({
          messageId: webhookId(r.message_id),
          eventType: r.event_type,
          attempt: r.attempt,
          startedAt: r.started_at,
          durationMs: r.duration_ms,
          statusCode: r.status_code,
          outcome: r.outcome,
          response: r.response,
          error: r.error,
        })),
        totalCount: n,
      };
    },
    async replayOne(endpointId, eventId) {
      const [r] = await returning<MessageRow>(
        db,
        `UPDATE webhook_messages SET status = 'pending', attempts = 0, in_line = false, next_attempt_at = now(), updated_at = now(), dead_at = NULL
          WHERE endpoint_id = $1 AND id = $2 RETURNING ${MESSAGE_COLUMNS}`,
        [endpointId, eventId],
      );
      return r ? toMessage(r) : null;
    },
    async replayDead(endpointId, since, until) {
      const rows = await returning<unknown>(
        db,
        `UPDATE webhook_messages SET status = 'pending', attempts = 0, in_line = false, next_attempt_at = now(), updated_at = now(), dead_at = NULL
          WHERE endpoint_id = $1 AND status = 'dead' AND occurred_at >= $2 AND occurred_at < $3 RETURNING 1`,
        [endpointId, since, until],
      );
      return rows.length;
    },
    async purge(before, limit) {
      const [{ n }] = await db.query<[{ n: number }]>(
        `WITH gone AS (
           DELETE FROM webhook_messages WHERE ctid IN (
             SELECT ctid FROM webhook_messages WHERE status IN ('delivered', 'dead') AND updated_at < $1 LIMIT $2)
           RETURNING endpoint_id, id),
         attempts AS (DELETE FROM webhook_attempts a USING gone g WHERE a.endpoint_id = g.endpoint_id AND a.message_id = g.id)
         SELECT count(*)::int AS n FROM gone`,
        [before, limit],
      );
      return n;
    },
  };
}
