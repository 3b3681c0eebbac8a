/**
 * oidc-provider's storage on identity's PostgreSQL (the shape of the library's example adapters):
 * one row per model instance in `oidc_payloads`, keyed by (kind, id), with the columns the
 * provider looks rows up by (grant, user code, uid) and the account, so a subject revocation
 * ends every session, grant and token of a user in one statement. Expired rows are never
 * returned and are purged by housekeeping. Clients are not stored here: `Client` reads the
 * registry through ClientLookup (client-metadata.ts).
 *
 * A token request reads a code or refresh token and then its grant, then writes (consume, the
 * next refresh token, the access token): the adapters share a GrantReadAhead, so the token's read
 * brings its grant along, and inside a token request their writes are collected and written in
 * one statement before the answer leaves (token-writes.ts). A refresh grant is two round trips.
 */
import { isPlainText, queryNamed } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { ProviderGrantStore } from '../../domain/ports';
import { TimedEntries } from './timed-entries';
import { TokenRequestWrites, type WritePart, consumePart } from './token-writes';

/** What the provider stores: any JSON object; these fields are indexed when present. */
export interface AdapterPayload {
  readonly [key: string]: unknown;
  readonly grantId?: string;
  readonly userCode?: string;
  readonly uid?: string;
  readonly accountId?: string;
  readonly consumed?: unknown;
}

/** The adapter interface of oidc-provider (docs: `adapter`). */
export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * Identifiers from a request (a code, a token, a user code, a uid) with a control character name
 * no record, and are answered "not found" before they reach PostgreSQL (issue #35, item 6). A
 * payload holding one (a request parameter the library keeps, such as a state: a NUL cannot even
 * be stored as jsonb) is refused as invalid_request, as the REST edge refuses such strings.
 */
async function refuseNotPlain(payload: AdapterPayload): Promise<void> {
  let plain = true;
  JSON.stringify(payload, (key, value: unknown) => {
    if (!isPlainText(key) || (typeof value === 'string' && !isPlainText(value))) plain = false;
    return value;
  });
  if (plain) return;
  const { errors } = await import('oidc-provider');
  throw new errors.InvalidRequest('a parameter contains control characters');
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : null);

interface Row {
  payload: Record<string, unknown>;
  consumed_at: Date | null;
}

interface WithGrant extends Row {
  grant_payload: Record<string, unknown> | null;
  retry_answer?: Buffer | null;
}

const payloadOf = (row: Row): AdapterPayload => (row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload);

/** A row's insert or replacement (typed parameters: the values come through a SELECT, so the write can wait on a consume). */
function upsertPart(kind: string, id: string, payload: AdapterPayload, expiresIn: number | undefined): WritePart {
  return {
    shape: 'upsert',
    row: `${kind}:${id}`,
    values: [kind, id, JSON.stringify(payload), str(payload.grantId), str(payload.userCode), str(payload.uid), str(payload.accountId), expiresIn ?? null],
    text: (p, guard) => `INSERT INTO oidc_payloads (kind, id, payload, grant_id, user_code, uid, account_id, expires_at, consumed_at)
       SELECT ${p(1)}::text, ${p(2)}::text, ${p(3)}::jsonb, ${p(4)}::text, ${p(5)}::text, ${p(6)}::text, ${p(7)}::text,
         CASE WHEN ${p(8)}::int IS NULL THEN NULL ELSE now() + make_interval(secs => ${p(8)}::int) END, NULL::timestamptz WHERE ${guard}
       ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, user_code = EXCLUDED.user_code,
         uid = EXCLUDED.uid, account_id = EXCLUDED.account_id, expires_at = EXCLUDED.expires_at`,
  };
}

/** The kinds whose find brings their grant along (the token endpoint reads the grant next). */
const GRANT_READ_AHEAD = new Set(['RefreshToken', 'AuthorizationCode']);

/**
 * Grants read with their code or refresh token, for the grant's find that follows within the
 * request: taken once, gone after a second, and dropped by any change to the grant through
 * this process.
 */
export class GrantReadAhead {
  readonly grants = new TimedEntries<AdapterPayload>(1_000);
}

/** What the provider's adapters share (one per provider). */
export interface AdapterShared {
  readonly readAhead: GrantReadAhead;
  readonly writes: TokenRequestWrites;
  /** OIDC_REFRESH_RETRY_SECONDS (refresh-retry.ts); absent or 0: a consumed refresh token is always a reuse. */
  readonly refreshRetrySeconds?: number;
}

export class PgOidcAdapter implements OidcAdapter {
  private readonly readAhead: GrantReadAhead;
  private readonly writes: TokenRequestWrites;
  private readonly retrySeconds: number;

  constructor(
    private readonly ds: DataSource,
    private readonly kind: string,
    shared?: AdapterShared,
  ) {
    this.readAhead = shared?.readAhead ?? new GrantReadAhead();
    this.writes = shared?.writes ?? new TokenRequestWrites(ds);
    this.retrySeconds = kind === 'RefreshToken' ? (shared?.refreshRetrySeconds ?? 0) : 0;
  }

  // Every token request reads and writes here: named statements on the pool (planned once per
  // connection, and without TypeORM's query runner).
  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await refuseNotPlain(payload);
    if (this.kind === 'Grant') this.readAhead.grants.delete(id);
    await this.writes.add(upsertPart(this.kind, id, payload, expiresIn));
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!isPlainText(id)) return undefined;
    await this.writes.settle();
    if (this.kind === 'Grant') {
      const ahead = this.readAhead.grants.take(id);
      if (ahead) return ahead;
    }
    if (!GRANT_READ_AHEAD.has(this.kind)) return this.one('id', id);
    const row = this.retrySeconds > 0 ? await this.findRetryable(id) : await this.findWithGrant(id);
    if (!row) return undefined;
    const grantId = str(row.payload.grantId);
    if (grantId && row.grant_payload) this.readAhead.grants.set(grantId, row.grant_payload);
    if (row.retry_answer) {
      // Rotated within the window and its successor unused: the request retries that rotation.
      this.writes.noteRetry({ tokenId: id, answer: row.retry_answer });
      return row.payload;
    }
    return payloadOf(row);
  }

  /** The token and its grant (live), in one read. */
  private async findWithGrant(id: string): Promise<WithGrant | undefined> {
    const rows = await queryNamed<WithGrant>(
      this.ds.manager,
      'identity.oidc.find.with-grant',
      `SELECT t.payload, t.consumed_at, g.payload AS grant_payload FROM oidc_payloads t
       LEFT JOIN oidc_payloads g ON g.kind = 'Grant' AND g.id = t.grant_id AND (g.expires_at IS NULL OR g.expires_at > now())
       WHERE t.kind = $1 AND t.id = $2 AND (t.expires_at IS NULL OR t.expires_at > now()) LIMIT 1`,
      [this.kind, id],
    );
    return rows[0];
  }

  /** A refresh token with its grant, and the answer its rotation gave when a retry may have it (refresh-retry.ts). */
  private async findRetryable(id: string): Promise<WithGrant | undefined> {
    const rows = await queryNamed<WithGrant>(
      this.ds.manager,
      'identity.oidc.find.refresh-retryable',
      `SELECT t.payload, t.consumed_at, g.payload AS grant_payload,
         CASE WHEN t.consumed_at > now() - make_interval(secs => $3::int) AND EXISTS (
           SELECT 1 FROM oidc_payloads s WHERE s.kind = t.kind AND s.id = t.successor_id AND s.consumed_at IS NULL
             AND (s.expires_at IS NULL OR s.expires_at > now())) THEN t.retry_answer END AS retry_answer
       FROM oidc_payloads t
       LEFT JOIN oidc_payloads g ON g.kind = 'Grant' AND g.id = t.grant_id AND (g.expires_at IS NULL OR g.expires_at > now())
       WHERE t.kind = $1 AND t.id = $2 AND (t.expires_at IS NULL OR t.expires_at > now()) LIMIT 1`,
      [this.kind, id, this.retrySeconds],
    );
    return rows[0];
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (!isPlainText(userCode)) return undefined;
    await this.writes.settle();
    return this.one('user_code', userCode);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!isPlainText(uid)) return undefined;
    await this.writes.settle();
    return this.one('uid', uid);
  }

  async consume(id: string): Promise<void> {
    await this.writes.add(consumePart(this.kind, id));
  }

  async destroy(id: string): Promise<void> {
    if (this.kind === 'Grant') this.readAhead.grants.delete(id);
    await this.writes.settle();
    await queryNamed(this.ds.manager, 'identity.oidc.destroy', `DELETE FROM oidc_payloads WHERE kind = $1 AND id = $2`, [this.kind, id]);
  }

  /** Every record of the grant, whatever its kind (codes, tokens, the grant itself). */
  async revokeByGrantId(grantId: string): Promise<void> {
    this.readAhead.grants.delete(grantId);
    await this.writes.settle();
    await this.ds.query(`DELETE FROM oidc_payloads WHERE grant_id = $1`, [grantId]);
  }

  private async one(column: 'id' | 'user_code' | 'uid', value: string): Promise<AdapterPayload | undefined> {
    const rows = await queryNamed<Row>(
      this.ds.manager,
      `identity.oidc.find.${column}`,
      `SELECT payload, consumed_at FROM oidc_payloads WHERE kind = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
      [this.kind, value],
    );
    const row = rows[0];
    return row ? payloadOf(row) : undefined;
  }
}

/** Ends every OP session, grant, code and token of a user (subject revocation). */
export async function revokeOidcSubject(ds: DataSource | EntityManager, accountId: string): Promise<number> {
  const [, n] = await ds.query<[unknown, number]>(`DELETE FROM oidc_payloads WHERE account_id = $1`, [accountId]);
  return n;
}

/** Ends every grant and token of a client (the client was deleted, or re-pointed): how many records went, and how many of them were users' grants. */
export async function revokeOidcClient(ds: DataSource | EntityManager, clientId: string): Promise<{ records: number; grants: number }> {
  const [row] = await ds.query<Array<{ records: number; grants: number }>>(
    `WITH ended AS (DELETE FROM oidc_payloads WHERE payload->>'clientId' = $1 RETURNING kind)
     SELECT count(*)::int AS records, (count(*) FILTER (WHERE kind = 'Grant'))::int AS grants FROM ended`,
    [clientId],
  );
  return { records: row?.records ?? 0, grants: row?.grants ?? 0 };
}

/** ProviderGrantStore over a transaction's (or the pool's) EntityManager. */
export class PgProviderGrants implements ProviderGrantStore {
  constructor(private readonly m: EntityManager) {}

  endClient(clientId: string): Promise<{ records: number; grants: number }> {
    return revokeOidcClient(this.m, clientId);
  }
}

/** Housekeeping: rows whose expiry has passed (never read again). */
export async function purgeExpiredOidc(ds: DataSource): Promise<void> {
  await ds.query(`DELETE FROM oidc_payloads WHERE expires_at < now()`);
}
