/** An organization's SCIM connections: every statement names its organization; a token is kept only as its SHA-256. */
import type { EntityManager } from 'typeorm';
import type { ListPosition } from '../domain/model';
import type { ScimConnection, ScimConnectionStore } from '../domain/scim';

interface ConnectionSql {
  id: string;
  organization_id: string;
  name: string;
  created_by: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const COLUMNS = 'c.id, c.organization_id, c.name, c.created_by, c.created_at, c.revoked_at, c.last_used_at';

const toConnection = (r: ConnectionSql): ScimConnection => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  createdBy: r.created_by,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

export class PgScimConnectionStore implements ScimConnectionStore {
  constructor(private readonly m: EntityManager) {}

  async insert(c: { id: string; organizationId: string; name: string; tokenHash: Buffer; createdBy: string }): Promise<void> {
    await this.m.query('INSERT INTO scim_connections (id, organization_id, name, token_hash, created_by) VALUES ($1, $2, $3, $4, $5)', [c.id, c.organizationId, c.name, c.tokenHash, c.createdBy]);
  }

  async list(organizationId: string, query: { pageSize: number; page?: number; after?: ListPosition }): Promise<{ items: ScimConnection[]; totalCount: number }> {
    const [{ n }] = await this.m.query<[{ n: string }]>('SELECT count(*) AS n FROM scim_connections WHERE organization_id = $1', [organizationId]);
    const rows = await this.m.query<ConnectionSql[]>(`SELECT ${COLUMNS} FROM scim_connections c WHERE c.organization_id = $1 ORDER BY c.created_at, c.id LIMIT $2 OFFSET $3`, [
      organizationId,
      query.pageSize,
      ((query.page ?? 1) - 1) * query.pageSize,
    ]);
    return { items: rows.map(toConnection), totalCount: Number(n) };
  }

  async find(organizationId: string, id: string): Promise<ScimConnection | null> {
    const [row] = await this.m.query<ConnectionSql[]>(`SELECT ${COLUMNS} FROM scim_connections c WHERE c.organization_id = $1 AND c.id = $2`, [organizationId, id]);
    return row ? toConnection(row) : null;
  }

  async revoke(organizationId: string, id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE scim_connections SET revoked_at = now() WHERE organization_id = $1 AND id = $2 AND revoked_at IS NULL', [organizationId, id]);
    return n > 0;
  }

  async authenticate(tokenHash: Buffer): Promise<ScimConnection | null> {
    // The use is recorded at most once a minute per connection (a provisioning run sends thousands of calls).
    const [row] = await this.m.query<ConnectionSql[]>(
      `WITH hit AS (SELECT c.id FROM scim_connections c JOIN organizations o ON o.id = c.organization_id AND o.deleted_at IS NULL
                     WHERE c.token_hash = $1 AND c.revoked_at IS NULL),
            touched AS (UPDATE scim_connections c SET last_used_at = now() FROM hit
                         WHERE c.id = hit.id AND (c.last_used_at IS NULL OR c.last_used_at < now() - interval '1 minute') RETURNING c.id)
       SELECT ${COLUMNS} FROM scim_connections c JOIN hit ON hit.id = c.id`,
      [tokenHash],
    );
    return row ? toConnection(row) : null;
  }
}
