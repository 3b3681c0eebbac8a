/**
 * The dispatcher's statements. Work is claimed by endpoint ("lanes"): a lane is an endpoint with a
 * message it may send now (the first of its line is due, or one out of line is), leased for a
 * while to one dispatcher (FOR UPDATE SKIP LOCKED, then a lease with a token), least recently
 * claimed first. Only the lease holder sends the endpoint's messages, so replicas never send the
 * same attempt at once and the endpoint's order holds; a dispatcher that dies leaves a lease that
 * runs out, and its unrecorded attempts are made again (at least once, the same webhook-id).
 */
import { type NewEvent, appendEvents } from '@iam/platform';
import type { DataSource } from 'typeorm';
import type { Outcome } from '../../domain/delivery-policy';
import { returning } from './endpoints-store';

export interface LaneEndpoint {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  readonly eventTypes: string[];
  readonly publicKey: string;
  readonly secret: Buffer;
  /** The rotated-out secret, while its grace window lasts. */
  readonly previousSecret: Buffer | null;
  readonly signingKey: Buffer | null;
  readonly previousSigningKey: Buffer | null;
  readonly failingSince: Date | null;
}

export interface LaneMessage {
  readonly eventId: string;
  /** Its place in the queue (a bigint, as text). */
  readonly seq: string;
  readonly eventType: string;
  readonly payload: string;
  readonly occurredAt: Date;
  /** Attempts in the current schedule (a replay starts a new one). */
  readonly attempts: number;
  readonly totalAttempts: number;
  readonly inLine: boolean;
  readonly due: boolean;
}

/** What one attempt did to its message. */
export interface AttemptRecord {
  readonly eventId: string;
  readonly attempt: number;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly outcome: Outcome;
  readonly response: string;
  readonly error: string;
  /** The message afterwards. */
  readonly status: 'pending' | 'delivered' | 'dead';
  readonly scheduleAttempts: number;
  /** Delay until the next attempt (pending only). */
  readonly nextInMs: number | null;
  readonly inLine: boolean;
}

/** What the lane's attempts did to the endpoint. */
export interface EndpointOutcome {
  /** A delivery succeeded: the endpoint is healthy again. */
  readonly healthy: boolean;
  /** The endpoint failed: no attempt before this (ms from now); the failing clock starts if it was not running. */
  readonly holdMs?: number;
  /** Disable it (410 Gone, or failing for too long). */
  readonly disable?: 'gone' | 'failing';
}

export interface DispatchStore {
  claimLanes(max: number, leaseMs: number, token: string): Promise<LaneEndpoint[]>;
  /** The endpoint's next messages after `afterSeq` in queue order: its line and the due ones out of it. */
  laneMessages(endpointId: string, limit: number, afterSeq?: string): Promise<LaneMessage[]>;
  /**
   * Records attempts, the endpoint's outcome and events in one transaction, and extends the lease;
   * false when the lease was lost meanwhile (another dispatcher may have the lane: stop).
   */
  record(endpointId: string, token: string, leaseMs: number, attempts: readonly AttemptRecord[], outcome: EndpointOutcome | undefined, events: readonly NewEvent[]): Promise<boolean>;
  release(endpointId: string, token: string): Promise<void>;
  /** How late (s) the oldest message that could be sent now is; 0 when none waits. */
  queueAgeSeconds(): Promise<number>;
  counts(): Promise<{ pending: number; dead: number }>;
}

/** Endpoints with something to send now (the first of the line due, or one out of line due). */
const READY = `
  e.enabled AND e.deleted_at IS NULL
  AND (e.retry_at IS NULL OR e.retry_at <= now())
  AND ((SELECT m.next_attempt_at FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.status = 'pending' AND m.in_line ORDER BY m.seq LIMIT 1) <= now()
       OR EXISTS (SELECT 1 FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.status = 'pending' AND NOT m.in_line AND m.next_attempt_at <= now()))`;

export function pgDispatch(ds: DataSource): DispatchStore {
  return {
    async claimLanes(max, leaseMs, token) {
      return returning<LaneEndpoint>(
        ds,
        `WITH ready AS (
           SELECT e.id FROM webhook_endpoints e
            WHERE ${READY} AND (e.lease_until IS NULL OR e.lease_until < now())
            ORDER BY e.claimed_at NULLS FIRST LIMIT $1 FOR UPDATE SKIP LOCKED)
         UPDATE webhook_endpoints e SET lease_until = now() + $2 * interval '1 millisecond', lease_token = $3, claimed_at = now()
           FROM ready WHERE e.id = ready.id
         RETURNING e.id, e.url, e.description, e.event_types AS "eventTypes", e.public_key AS "publicKey", e.secret, e.signing_key AS "signingKey", e.failing_since AS "failingSince",
           CASE WHEN e.previous_expires_at > now() THEN e.previous_secret END AS "previousSecret",
           CASE WHEN e.previous_expires_at > now() THEN e.previous_signing_key END AS "previousSigningKey"`,
        [max, leaseMs, token],
      );
    },
    async laneMessages(endpointId, limit, afterSeq = '0') {
      // The line and the due messages out of it, each from its own partial index, merged in queue
      // order: one condition with an OR would walk the endpoint's whole history (delivered rows
      // included) on the (endpoint_id, seq) index, a cost growing with every message kept.
      const cols = `m.id AS "eventId", m.seq, m.event_type AS "eventType", m.payload, m.occurred_at AS "occurredAt", m.attempts, m.total_attempts AS "totalAttempts", m.in_line AS "inLine", m.next_attempt_at <= now() AS due`;
      return ds.query<LaneMessage[]>(
        // Ordered by the bigint (the text would order 10 before 9).
        `SELECT x."eventId", x.seq::text AS seq, x."eventType", x.payload, x."occurredAt", x.attempts, x."totalAttempts", x."inLine", x.due FROM (
           (SELECT ${cols} FROM webhook_messages m
             WHERE m.endpoint_id = $1 AND m.status = 'pending' AND m.in_line AND m.seq > $3::bigint ORDER BY m.seq LIMIT $2)
           UNION ALL
           (SELECT ${cols} FROM webhook_messages m
             WHERE m.endpoint_id = $1 AND m.status = 'pending' AND NOT m.in_line AND m.next_attempt_at <= now() AND m.seq > $3::bigint ORDER BY m.seq LIMIT $2)) AS x
          ORDER BY x.seq LIMIT $2`,
        [endpointId, limit, afterSeq],
      );
    },
    async record(endpointId, token, leaseMs, attempts, outcome, events) {
      const col = <K extends keyof AttemptRecord>(k: K) => attempts.map((a) => a[k]);
      const params = [
        endpointId,
        token,
        leaseMs,
        outcome ? outcome.healthy : null,
        outcome?.holdMs ?? null,
        outcome?.disable ?? null,
        col('eventId'),
        col('attempt'),
        col('startedAt'),
        col('durationMs'),
        col('statusCode'),
        col('outcome'),
        col('response'),
        col('error'),
        col('status'),
        col('scheduleAttempts'),
        col('nextInMs'),
        col('inLine'),
        attempts.map((a) => (a.outcome === 'delivered' ? '' : a.error || (a.statusCode ? `HTTP ${a.statusCode}` : ''))),
      ];
      // One statement (atomic by itself): the lease extended with the endpoint's outcome, the
      // attempts, the messages. Only a message still pending changes (a lease lost meanwhile
      // cannot undo a delivery).
      const sql = `
        WITH ep AS (
          UPDATE webhook_endpoints SET lease_until = now() + $3 * interval '1 millisecond',
              failing_since = CASE WHEN $4::bool IS NULL THEN failing_since WHEN $4 THEN NULL ELSE coalesce(failing_since, now()) END,
              retry_at = CASE WHEN $4::bool IS NULL THEN retry_at WHEN $5::bigint IS NULL THEN NULL ELSE now() + $5 * interval '1 millisecond' END,
              enabled = CASE WHEN $6::text IS NULL THEN enabled ELSE false END,
              disabled_reason = coalesce($6, disabled_reason),
              updated_at = CASE WHEN $6::text IS NULL THEN updated_at ELSE now() END
            WHERE id = $1 AND lease_token = $2 RETURNING 1),
        att AS (
          INSERT INTO webhook_attempts (endpoint_id, message_id, attempt, started_at, duration_ms, status_code, outcome, response, error)
          SELECT $1, v.* FROM unnest($7::uuid[], $8::int[], $9::timestamptz[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[]) AS v),
        msg AS (
          UPDATE webhook_messages m SET status = v.status, attempts = v.attempts, total_attempts = greatest(m.total_attempts, v.total),
              next_attempt_at = CASE WHEN v.next_ms IS NULL THEN m.next_attempt_at ELSE now() + v.next_ms * interval '1 millisecond' END,
              in_line = v.in_line, last_status_code = v.code, last_error = v.err, updated_at = now(),
              delivered_at = CASE WHEN v.status = 'delivered' THEN now() ELSE m.delivered_at END,
              dead_at = CASE WHEN v.status = 'dead' THEN now() ELSE m.dead_at END
            FROM unnest($7::uuid[], $15::text[], $16::int[], $8::int[], $17::bigint[], $18::bool[], $11::int[], $19::text[]) AS v (id, status, attempts, total, next_ms, in_line, code, err)
           WHERE m.endpoint_id = $1 AND m.id = v.id AND m.status = 'pending')
        SELECT count(*)::int AS held FROM ep`;
      if (events.length === 0) {
        const [{ held }] = await ds.query<[{ held: number }]>(sql, params);
        return held > 0;
      }
      return ds.transaction(async (m) => {
        const [{ held }] = await m.query<[{ held: number }]>(sql, params);
        await appendEvents(m, events);
        return held > 0;
      });
    },
    async release(endpointId, token) {
      await ds.query(`UPDATE webhook_endpoints SET lease_until = NULL, lease_token = NULL WHERE id = $1 AND lease_token = $2`, [endpointId, token]);
    },
    async queueAgeSeconds() {
      const [{ age }] = await ds.query<[{ age: number | null }]>(
        `SELECT EXTRACT(EPOCH FROM now() - min(due))::float8 AS age FROM (
           SELECT greatest((SELECT m.next_attempt_at FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.status = 'pending' AND m.in_line ORDER BY m.seq LIMIT 1), e.retry_at) AS due
             FROM webhook_endpoints e WHERE e.enabled AND e.deleted_at IS NULL
           UNION ALL
           SELECT greatest(min(m.next_attempt_at), max(e.retry_at)) FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
            WHERE m.status = 'pending' AND NOT m.in_line AND e.enabled AND e.deleted_at IS NULL GROUP BY e.id) AS x
          WHERE due <= now()`,
      );
      return age ?? 0;
    },
    async counts() {
      const [r] = await ds.query<[{ pending: number; dead: number }]>(
        // Each count from a partial index (a count over the table would read every delivered row).
        `SELECT (SELECT count(*)::int FROM webhook_messages WHERE status = 'pending' AND in_line) + (SELECT count(*)::int FROM webhook_messages WHERE status = 'pending' AND NOT in_line) AS pending,
                (SELECT count(*)::int FROM webhook_messages WHERE status = 'dead') AS dead`,
      );
      return r;
    },
  };
}
