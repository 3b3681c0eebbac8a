/** Webhook endpoints in PostgreSQL (the settings, the sealed signing material, a health summary). */
import type { DisabledReason, EndpointSettings, Page, WebhookEndpoint } from '../../domain/webhooks';

/** DataSource or EntityManager: whatever runs the statements (a transaction's manager, or the pool). */
export interface Queryable {
  query<T = unknown>(sql: string, params?: unknown[]): Promise<T>;
}

/**
 * The rows an UPDATE or DELETE … RETURNING gave: TypeORM's PostgreSQL driver answers those as
 * [rows, affected count] and any other statement as the rows.
 */
export async function returning<T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  const r = await db.query<unknown>(sql, params);
  if (Array.isArray(r) && r.length === 2 && Array.isArray(r[0]) && typeof r[1] === 'number') return r[0] as T[];
  return r as T[];
}

/** An endpoint with its sealed signing material (never leaves the service). */
export interface EndpointRecord extends WebhookEndpoint {
  readonly secret: Buffer;
  readonly signingKey: Buffer | null;
}

interface Row {
  id: string;
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string;
  secret: Buffer;
  signing_key: Buffer | null;
  public_key: string;
  previous_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  pending: number;
  dead: number;
}

const COLUMNS = `e.id, e.url, e.description, e.event_types, e.enabled, e.disabled_reason, e.secret, e.signing_key, e.public_key,
  CASE WHEN e.previous_expires_at > now() THEN e.previous_expires_at END AS previous_expires_at, e.failing_since, e.created_at, e.updated_at, e.deleted_at,
  (SELECT count(*)::int FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.status = 'pending') AS pending,
  (SELECT count(*)::int FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.status = 'dead') AS dead`;

const toRecord = (r: Row): EndpointRecord => ({
  id: r.id,
  url: r.url,
  description: r.description,
  eventTypes: r.event_types,
  enabled: r.enabled,
  ed25519: r.public_key !== '',
  disabledReason: r.disabled_reason as DisabledReason,
  publicKey: r.public_key,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
  previousExpiresAt: r.previous_expires_at,
  failingSince: r.failing_since,
  pending: r.pending,
  dead: r.dead,
  secret: r.secret,
  signingKey: r.signing_key,
});

/** The public view (no signing material). */
export function publicView(e: EndpointRecord): WebhookEndpoint {
  const { secret: _s, signingKey: _k, ...rest } = e;
  return rest;
}

export interface EndpointStore {
  insert(e: { id: string; settings: EndpointSettings; secret: Buffer; signingKey: Buffer | null; publicKey: string }): Promise<void>;
  /** `lock`: FOR UPDATE (a change in this transaction follows). */
  get(id: string, opts?: { includeDeleted?: boolean; lock?: boolean }): Promise<EndpointRecord | null>;
  list(q: { page: number; pageSize: number; q?: string; includeDeleted?: boolean }): Promise<Page<WebhookEndpoint>>;
  /** New settings; enabling clears the platform's reason, its backoff and the failing clock. */
  update(id: string, s: EndpointSettings): Promise<void>;
  softDelete(id: string): Promise<void>;
  /** New signing material; the old one kept (signing too) until `previousExpiresAt`. */
  rotate(id: string, r: { secret: Buffer; previousSecret: Buffer; signingKey: Buffer | null; previousSigningKey: Buffer | null; publicKey: string; previousExpiresAt: Date }): Promise<void>;
}

export function pgEndpoints(db: Queryable): EndpointStore {
  return {
    async insert(e) {
      await db.query(
        `INSERT INTO webhook_endpoints (id, url, description, event_types, enabled, secret, signing_key, public_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [e.id, e.settings.url, e.settings.description, e.settings.eventTypes, e.settings.enabled, e.secret, e.signingKey, e.publicKey],
      );
    },
    async get(id, opts = {}) {
      const rows = await db.query<Row[]>(
        `SELECT ${COLUMNS} FROM webhook_endpoints e WHERE e.id = $1 ${opts.includeDeleted ? '' : 'AND e.deleted_at IS NULL'} ${opts.lock ? 'FOR UPDATE' : ''}`,
        [id],
      );
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async list(q) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (!q.includeDeleted) where.push('e.deleted_at IS NULL');
      if (q.q) {
        params.push(`%${q.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
        where.push(`(e.url ILIKE $${params.length} OR e.description ILIKE $${params.length})`);
      }
      const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const [{ n }] = await db.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM webhook_endpoints e ${w}`, params);
      params.push(q.pageSize, (q.page - 1) * q.pageSize);
      const rows = await db.query<Row[]>(`SELECT ${COLUMNS} FROM webhook_endpoints e ${w} ORDER BY e.created_at, e.id LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
      return { items: rows.map((r) => publicView(toRecord(r))), totalCount: n };
    },
    async update(id, s) {
      await db.query(
        `UPDATE webhook_endpoints SET url = $2, description = $3, event_types = $4,
            disabled_reason = CASE WHEN $5 THEN '' ELSE disabled_reason END,
            retry_at = CASE WHEN $5 AND NOT enabled THEN NULL ELSE retry_at END,
            failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END,
            enabled = $5, updated_at = now()
          WHERE id = $1`,
        [id, s.url, s.description, s.eventTypes, s.enabled],
      );
    },
    async softDelete(id) {
      await db.query(`UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now() WHERE id = $1`, [id]);
    },
    async rotate(id, r) {
      await db.query(
        `UPDATE webhook_endpoints SET secret = $2, previous_secret = $3, signing_key = $4, previous_signing_key = $5, public_key = $6, previous_expires_at = $7, updated_at = now() WHERE id = $1`,
        [id, r.secret, r.previousSecret, r.signingKey, r.previousSigningKey, r.publicKey, r.previousExpiresAt],
      );
    },
  };
}
