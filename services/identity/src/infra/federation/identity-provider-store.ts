/** Upstream identity providers in PostgreSQL (`identity_providers`); the client secret in and out sealed only. */
import { escapeLike, isUuid } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import { type ClaimMapping, DEFAULT_CLAIM_MAPPING, LINKING_MODES, PROVIDER_KINDS, type IdentityProviderListQuery, type IdentityProviderPage, type IdentityProviderRecord, type IdentityProviderSettings, type IdentityProviderStore } from '../../domain/identity-providers';

interface ProviderSql {
  id: string;
  kind: string;
  name: string;
  display_name: string;
  discovery_url: string | null;
  client_id: string;
  has_secret: boolean;
  scopes: string[];
  claim_mapping: Partial<ClaimMapping> | null;
  trust_email_verified: boolean;
  trust_upstream_mfa: boolean;
  allow_sign_up: boolean;
  linking: string;
  default_roles: string[];
  icon_url: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  version: number;
}

const COLUMNS = `id, kind, name, display_name, discovery_url, client_id, sealed_client_secret IS NOT NULL AS has_secret, scopes, claim_mapping,
  trust_email_verified, trust_upstream_mfa, allow_sign_up, linking, default_roles, icon_url, enabled, created_at, updated_at, deleted_at, version`;

const oneOf = <T extends string>(xs: readonly T[], v: string, fallback: T): T => xs.find((x) => x === v) ?? fallback;

function toRecord(r: ProviderSql): IdentityProviderRecord {
  const m = r.claim_mapping ?? {};
  return {
    id: r.id,
    kind: oneOf(PROVIDER_KINDS, r.kind, 'oidc'),
    name: r.name,
    displayName: r.display_name,
    discoveryUrl: r.discovery_url,
    clientId: r.client_id,
    hasClientSecret: r.has_secret,
    scopes: r.scopes,
    claimMapping: { ...DEFAULT_CLAIM_MAPPING, ...m },
    trustEmailVerified: r.trust_email_verified,
    trustUpstreamMfa: r.trust_upstream_mfa,
    allowSignUp: r.allow_sign_up,
    linking: oneOf(LINKING_MODES, r.linking, 'never'),
    defaultRoles: r.default_roles,
    iconUrl: r.icon_url,
    enabled: r.enabled,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
    version: r.version,
  };
}

const settingsParams = (p: IdentityProviderSettings): unknown[] => [
  p.kind,
  p.name,
  p.displayName,
  p.discoveryUrl,
  p.clientId,
  p.scopes,
  JSON.stringify(p.claimMapping),
  p.trustEmailVerified,
  p.trustUpstreamMfa,
  p.allowSignUp,
  p.linking,
  p.defaultRoles,
  p.iconUrl,
  p.enabled,
];

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown): boolean => (err as { driverError?: { code?: string }; code?: string }).driverError?.code === UNIQUE_VIOLATION || (err as { code?: string }).code === UNIQUE_VIOLATION;

export class PgIdentityProviders implements IdentityProviderStore {
  constructor(private readonly m: EntityManager) {}

  async list(query: IdentityProviderListQuery): Promise<IdentityProviderPage> {
    const params: unknown[] = [];
    const where: string[] = [];
    if (!query.includeDeleted) where.push('deleted_at IS NULL');
    if (query.q) {
      params.push(`%${escapeLike(query.q)}%`);
      where.push(`(name ILIKE $${params.length} ESCAPE '\\' OR display_name ILIKE $${params.length} ESCAPE '\\')`);
    }
    const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [counted] = await this.m.query<[{ n: string }]>(`SELECT count(*) AS n FROM identity_providers ${whereSql}`, params);
    const rows = await this.m.query<ProviderSql[]>(
      `SELECT ${COLUMNS} FROM identity_providers ${whereSql} ORDER BY created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, query.pageSize, (query.page - 1) * query.pageSize],
    );
    return { items: rows.map(toRecord), totalCount: Number(counted.n) };
  }

  async listEnabled(): Promise<IdentityProviderRecord[]> {
    const rows = await this.m.query<ProviderSql[]>(`SELECT ${COLUMNS} FROM identity_providers WHERE deleted_at IS NULL AND enabled ORDER BY created_at, id`);
    return rows.map(toRecord);
  }

  async get(idOrName: string, opts: { includeDeleted?: boolean; forUpdate?: boolean } = {}): Promise<IdentityProviderRecord | null> {
    const by = isUuid(idOrName) ? 'id = $1' : 'name = lower($1)';
    const [row] = await this.m.query<ProviderSql[]>(
      `SELECT ${COLUMNS} FROM identity_providers WHERE ${by} ${opts.includeDeleted ? '' : 'AND deleted_at IS NULL'} ORDER BY deleted_at NULLS FIRST LIMIT 1 ${opts.forUpdate ? 'FOR UPDATE' : ''}`,
      [idOrName],
    );
    return row ? toRecord(row) : null;
  }

  async sealedSecret(id: string): Promise<Buffer | null> {
    const [row] = await this.m.query<Array<{ sealed_client_secret: Buffer | null }>>('SELECT sealed_client_secret FROM identity_providers WHERE id = $1', [id]);
    return row?.sealed_client_secret ?? null;
  }

  async insert(p: IdentityProviderSettings & { id: string; sealedSecret: Buffer | null }): Promise<IdentityProviderRecord | null> {
    try {
      const [row] = await this.m.query<ProviderSql[]>(
        `INSERT INTO identity_providers (kind, name, display_name, discovery_url, client_id, scopes, claim_mapping, trust_email_verified, trust_upstream_mfa,
                                         allow_sign_up, linking, default_roles, icon_url, enabled, id, sealed_client_secret)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING ${COLUMNS}`,
        [...settingsParams(p), p.id, p.sealedSecret],
      );
      return toRecord(row!);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  async update(id: string, version: number, p: IdentityProviderSettings & { sealedSecret?: Buffer | null }): Promise<IdentityProviderRecord | null> {
    try {
      const [rows] = await this.m.query<[ProviderSql[], number]>(
        `UPDATE identity_providers SET kind = $1, name = $2, display_name = $3, discovery_url = $4, client_id = $5, scopes = $6, claim_mapping = $7::jsonb,
                trust_email_verified = $8, trust_upstream_mfa = $9, allow_sign_up = $10, linking = $11, default_roles = $12, icon_url = $13, enabled = $14,
                sealed_client_secret = CASE WHEN $17 THEN sealed_client_secret ELSE $18::bytea END, updated_at = now(), version = version + 1
          WHERE id = $15 AND version = $16 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
        [...settingsParams(p), id, version, p.sealedSecret === undefined, p.sealedSecret ?? null],
      );
      const row = rows[0];
      return row ? toRecord(row) : null;
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE identity_providers SET deleted_at = now(), updated_at = now(), version = version + 1 WHERE id = $1 AND deleted_at IS NULL', [id]);
    return n > 0;
  }
}
