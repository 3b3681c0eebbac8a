/**
 * oidc-provider's storage on identity's PostgreSQL (the shape of the library's example adapters):
 * one row per model instance in `oidc_payloads`, keyed by (kind, id), with the columns the
 * provider looks rows up by (grant, user code, uid) and the account, so a subject revocation
 * ends every session, grant and token of a user in one statement. Expired rows are never
 * returned and are purged by housekeeping. Clients are not stored here: `Client` reads the
 * registry through ClientLookup (client-metadata.ts).
 */
import { queryNamed } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { ProviderGrantStore } from '../../domain/ports';

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

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : null);

interface Row {
  payload: Record<string, unknown>;
  consumed_at: Date | null;
}

export class PgOidcAdapter implements OidcAdapter {
  constructor(
    private readonly ds: DataSource,
    private readonly kind: string,
  ) {}

  // Every token request reads and writes here: named statements on the pool (planned once per
  // connection, and without TypeORM's query runner), as the refresh rotation's are.
  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await queryNamed(
      this.ds.manager,
      'identity.oidc.upsert',
      `INSERT INTO oidc_payloads (kind, id, payload, grant_id, user_code, uid, account_id, expires_at, consumed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8::int IS NULL THEN NULL ELSE now() + make_interval(secs => $8::int) END, NULL)
       ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, user_code = EXCLUDED.user_code,
         uid = EXCLUDED.uid, account_id = EXCLUDED.account_id, expires_at = EXCLUDED.expires_at`,
      [this.kind, id, JSON.stringify(payload), str(payload.grantId), str(payload.userCode), str(payload.uid), str(payload.accountId), expiresIn ?? null],
    );
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.one('id', id);
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.one('user_code', userCode);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.one('uid', uid);
  }

  async consume(id: string): Promise<void> {
    await queryNamed(this.ds.manager, 'identity.oidc.consume', `UPDATE oidc_payloads SET consumed_at = now() WHERE kind = $1 AND id = $2 AND consumed_at IS NULL`, [this.kind, id]);
  }

  async destroy(id: string): Promise<void> {
    await queryNamed(this.ds.manager, 'identity.oidc.destroy', `DELETE FROM oidc_payloads WHERE kind = $1 AND id = $2`, [this.kind, id]);
  }

  /** Every record of the grant, whatever its kind (codes, tokens, the grant itself). */
  async revokeByGrantId(grantId: string): Promise<void> {
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
    if (!row) return undefined;
    return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
  }
}

/** Ends every OP session, grant, code and token of a user (subject revocation). */
export async function revokeOidcSubject(ds: DataSource, accountId: string): Promise<number> {
  const [, n] = await ds.query<[unknown, number]>(`DELETE FROM oidc_payloads WHERE account_id = $1`, [accountId]);
  return n;
}

/** Ends every grant and token of a client (the client was deleted). */
export async function revokeOidcClient(ds: DataSource | EntityManager, clientId: string): Promise<number> {
  const [, n] = await ds.query<[unknown, number]>(`DELETE FROM oidc_payloads WHERE payload->>'clientId' = $1`, [clientId]);
  return n;
}

/** ProviderGrantStore over a transaction's (or the pool's) EntityManager. */
export class PgProviderGrants implements ProviderGrantStore {
  constructor(private readonly m: EntityManager) {}

  endClient(clientId: string): Promise<number> {
    return revokeOidcClient(this.m, clientId);
  }
}

/** Housekeeping: rows whose expiry has passed (never read again). */
export async function purgeExpiredOidc(ds: DataSource): Promise<void> {
  await ds.query(`DELETE FROM oidc_payloads WHERE expires_at < now()`);
}
