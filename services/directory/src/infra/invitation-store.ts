/** Invitations to an organization: every statement but the token lookup names its organization. */
import type { EntityManager } from 'typeorm';
import type { Page } from '../domain/model';
import type { Invitation, InvitationStore, MemberQuery } from '../domain/organizations';

interface InvitationSql {
  id: string;
  organization_id: string;
  email: string;
  role_ids: string[];
  roles: string[] | null;
  status: 'pending' | 'accepted' | 'revoked';
  expired: boolean;
  invited_by: string | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
  created_us: string;
}

const SELECT = `SELECT i.id, i.organization_id, i.email, i.role_ids, i.status, i.invited_by, i.expires_at, i.created_at, i.updated_at,
  i.expires_at <= now() AS expired, (extract(epoch FROM i.created_at) * 1000000)::int8::text AS created_us,
  ARRAY(SELECT r.name FROM organization_roles r WHERE r.id = ANY(i.role_ids) AND r.deleted_at IS NULL ORDER BY r.name) AS roles
  FROM organization_invitations i`;

const toInvitation = (r: InvitationSql): Invitation => ({
  id: r.id,
  organizationId: r.organization_id,
  email: r.email,
  roles: r.roles ?? [],
  status: r.status === 'pending' && r.expired ? 'expired' : r.status,
  invitedBy: r.invited_by,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class PgInvitationStore implements InvitationStore {
  constructor(private readonly m: EntityManager) {}

  async insert(i: { id: string; organizationId: string; email: string; roleIds: readonly string[]; tokenHash: Buffer; invitedBy: string; expiresAt: Date }): Promise<void> {
    await this.m.query(
      'INSERT INTO organization_invitations (id, organization_id, email, role_ids, token_hash, invited_by, expires_at) VALUES ($1, $2, $3, $4::uuid[], $5, $6, $7)',
      [i.id, i.organizationId, i.email, i.roleIds, i.tokenHash, i.invitedBy, i.expiresAt],
    );
  }

  async findPending(organizationId: string, email: string): Promise<Invitation | null> {
    const rows = await this.m.query<InvitationSql[]>(`${SELECT} WHERE i.organization_id = $1 AND i.email = $2 AND i.status = 'pending' FOR UPDATE OF i`, [organizationId, email]);
    return rows[0] ? toInvitation(rows[0]) : null;
  }

  async find(organizationId: string, id: string): Promise<Invitation | null> {
    const rows = await this.m.query<InvitationSql[]>(`${SELECT} WHERE i.organization_id = $1 AND i.id = $2`, [organizationId, id]);
    return rows[0] ? toInvitation(rows[0]) : null;
  }

  async renew(organizationId: string, id: string, r: { roleIds: readonly string[]; tokenHash: Buffer; expiresAt: Date }): Promise<void> {
    await this.m.query(
      'UPDATE organization_invitations SET role_ids = $3::uuid[], token_hash = $4, expires_at = $5, updated_at = now() WHERE organization_id = $1 AND id = $2',
      [organizationId, id, r.roleIds, r.tokenHash, r.expiresAt],
    );
  }

  async revoke(organizationId: string, id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE organization_invitations SET status = 'revoked', updated_at = now() WHERE organization_id = $1 AND id = $2 AND status = 'pending'`,
      [organizationId, id],
    );
    return n > 0;
  }

  async list(organizationId: string, query: MemberQuery): Promise<Page<Invitation>> {
    const params: unknown[] = [organizationId];
    const conds = ['i.organization_id = $1'];
    if (query.after) {
      params.push(query.after.values[0], query.after.id);
      conds.push(`(i.created_at, i.id) > (timestamptz 'epoch' + $2::int8 * interval '1 microsecond', $3::uuid)`);
    }
    const [{ n }] = query.after ? [{ n: '0' }] : await this.m.query<[{ n: string }]>('SELECT count(*) AS n FROM organization_invitations i WHERE i.organization_id = $1', [organizationId]);
    params.push(query.pageSize + 1, query.after ? 0 : ((query.page ?? 1) - 1) * query.pageSize);
    const rows = await this.m.query<InvitationSql[]>(`${SELECT} WHERE ${conds.join(' AND ')} ORDER BY i.created_at, i.id LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
    const page = rows.slice(0, query.pageSize);
    const last = page[page.length - 1];
    return { items: page.map(toInvitation), totalCount: Number(n), totalCountExact: true, next: rows.length > query.pageSize && last ? { values: [last.created_us], id: last.id } : undefined };
  }

  async findByToken(tokenHash: Buffer): Promise<(Invitation & { roleIds: string[] }) | null> {
    const rows = await this.m.query<InvitationSql[]>(`${SELECT} WHERE i.token_hash = $1 FOR UPDATE OF i`, [tokenHash]);
    return rows[0] ? { ...toInvitation(rows[0]), roleIds: rows[0].role_ids } : null;
  }

  async markAccepted(organizationId: string, id: string, userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE organization_invitations SET status = 'accepted', accepted_by = $3, updated_at = now() WHERE organization_id = $1 AND id = $2 AND status = 'pending' AND expires_at > now()`,
      [organizationId, id, userId],
    );
    return n > 0;
  }
}
