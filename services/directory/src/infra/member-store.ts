/**
 * Members of an organization and the organization roles they hold there. Every statement names
 * its organization (`organization_id = $1`), so an id of another organization's member finds
 * nothing; a deleted user or organization is no member of anything.
 */
import { escapeLike } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListPosition } from '../domain/model';
import { type Member, type MemberQuery, type MemberStore, type MembershipGrant, ORG_ADMIN_ROLE } from '../domain/organizations';

interface MemberSql {
  organization_id: string;
  user_id: string;
  email: string;
  first_name: string;
  last_name: string;
  email_verified: boolean;
  roles: string[] | null;
  created_at: Date;
  created_us: string;
}

const ROLES_OF = (m: string) =>
  `ARRAY(SELECT r.name FROM organization_member_roles mr JOIN organization_roles r ON r.id = mr.organization_role_id
          WHERE mr.organization_id = ${m}.organization_id AND mr.user_id = ${m}.user_id AND r.deleted_at IS NULL ORDER BY r.name)`;

const SELECT = `SELECT m.organization_id, m.user_id, u.email, u.first_name, u.last_name, u.email_verified, m.created_at,
  (extract(epoch FROM m.created_at) * 1000000)::int8::text AS created_us, ${ROLES_OF('m')} AS roles
  FROM organization_members m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL
  JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL`;

const toMember = (r: MemberSql): Member => ({
  organizationId: r.organization_id,
  userId: r.user_id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  emailVerified: r.email_verified,
  roles: r.roles ?? [],
  joinedAt: r.created_at,
});

interface GrantSql {
  id: string;
  slug: string;
  name: string;
  roles: string[] | null;
  permissions: string[] | null;
}

/** The organization roles a member holds there: its own, and those of the organization groups it is in (SCIM Groups). */
const EFFECTIVE_ROLE_IDS = (m: string) =>
  `(SELECT mr.organization_role_id FROM organization_member_roles mr WHERE mr.organization_id = ${m}.organization_id AND mr.user_id = ${m}.user_id
     UNION SELECT unnest(g.role_ids) FROM organization_group_members gm JOIN organization_groups g ON g.id = gm.group_id
      WHERE gm.organization_id = ${m}.organization_id AND gm.user_id = ${m}.user_id)`;

const GRANT = `SELECT o.id, o.slug, o.name,
  ARRAY(SELECT r.name FROM organization_roles r WHERE r.id IN ${EFFECTIVE_ROLE_IDS('m')} AND r.deleted_at IS NULL ORDER BY r.name) AS roles,
  ARRAY(SELECT DISTINCT p.name FROM organization_roles r
          JOIN organization_role_permissions rp ON rp.organization_role_id = r.id
          JOIN permissions p ON p.id = rp.permission_id AND p.deleted_at IS NULL
         WHERE r.id IN ${EFFECTIVE_ROLE_IDS('m')} AND r.deleted_at IS NULL ORDER BY p.name) AS permissions
  FROM organization_members m JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
  JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL AND u.disabled_at IS NULL`;

const toGrant = (r: GrantSql): MembershipGrant => ({ organization: { id: r.id, slug: r.slug, name: r.name }, roles: r.roles ?? [], permissions: r.permissions ?? [] });

export class PgMemberStore implements MemberStore {
  constructor(private readonly m: EntityManager) {}

  async add(organizationId: string, userId: string): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      'INSERT INTO organization_members (organization_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING user_id',
      [organizationId, userId],
    );
    return rows.length > 0;
  }

  async remove(organizationId: string, userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM organization_members WHERE organization_id = $1 AND user_id = $2', [organizationId, userId]);
    return n > 0;
  }

  async find(organizationId: string, userId: string, opts: { forUpdate?: boolean } = {}): Promise<Member | null> {
    const rows = await this.m.query<MemberSql[]>(`${SELECT} WHERE m.organization_id = $1 AND m.user_id = $2 ${opts.forUpdate ? 'FOR UPDATE OF m' : ''}`, [organizationId, userId]);
    return rows[0] ? toMember(rows[0]) : null;
  }

  async findByEmail(organizationId: string, email: string): Promise<Member | null> {
    const rows = await this.m.query<MemberSql[]>(`${SELECT} WHERE m.organization_id = $1 AND u.email = $2`, [organizationId, email]);
    return rows[0] ? toMember(rows[0]) : null;
  }

  async list(organizationId: string, query: MemberQuery): Promise<{ items: Member[]; next?: ListPosition; totalCount: number; totalCountExact: boolean }> {
    const params: unknown[] = [organizationId];
    const conds = ['m.organization_id = $1'];
    if (query.q) {
      params.push(`%${escapeLike(query.q)}%`);
      conds.push(`(u.email ILIKE $${params.length} ESCAPE '\\' OR u.first_name ILIKE $${params.length} ESCAPE '\\' OR u.last_name ILIKE $${params.length} ESCAPE '\\')`);
    }
    let counted = { totalCount: 0, totalCountExact: true };
    if (!query.after) {
      const [row] = await this.m.query<[{ n: string }]>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM organization_members m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL WHERE ${conds.join(' AND ')} LIMIT 1001) b`,
        params,
      );
      counted = { totalCount: Number(row.n), totalCountExact: Number(row.n) <= 1000 };
    } else {
      params.push(query.after.values[0], query.after.id);
      conds.push(`(m.created_at, m.user_id) > (timestamptz 'epoch' + $${params.length - 1}::int8 * interval '1 microsecond', $${params.length}::uuid)`);
    }
    params.push(query.pageSize + 1, query.after ? 0 : ((query.page ?? 1) - 1) * query.pageSize);
    const rows = await this.m.query<MemberSql[]>(
      `${SELECT} WHERE ${conds.join(' AND ')} ORDER BY m.created_at, m.user_id LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    const page = rows.slice(0, query.pageSize);
    const last = page[page.length - 1];
    const next = rows.length > query.pageSize && last ? { values: [last.created_us], id: last.user_id } : undefined;
    return { items: page.map(toMember), next, ...counted };
  }

  async setRoles(organizationId: string, userId: string, roleIds: readonly string[]): Promise<void> {
    await this.m.query('DELETE FROM organization_member_roles WHERE organization_id = $1 AND user_id = $2 AND NOT (organization_role_id = ANY($3::uuid[]))', [organizationId, userId, roleIds]);
    if (roleIds.length > 0) {
      await this.m.query(
        'INSERT INTO organization_member_roles (organization_id, user_id, organization_role_id) SELECT $1, $2, unnest($3::uuid[]) ON CONFLICT DO NOTHING',
        [organizationId, userId, roleIds],
      );
    }
  }

  async grant(organizationId: string, userId: string): Promise<MembershipGrant | null> {
    const rows = await this.m.query<GrantSql[]>(`${GRANT} WHERE m.organization_id = $1 AND m.user_id = $2`, [organizationId, userId]);
    return rows[0] ? toGrant(rows[0]) : null;
  }

  async grantsOf(userId: string): Promise<MembershipGrant[]> {
    const rows = await this.m.query<GrantSql[]>(`${GRANT} WHERE m.user_id = $1 ORDER BY o.slug`, [userId]);
    return rows.map(toGrant);
  }

  async lockAdmins(organizationId: string): Promise<string[]> {
    const rows = await this.m.query<Array<{ user_id: string }>>(
      `SELECT m.user_id FROM organization_members m
         JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL
         JOIN organization_member_roles mr ON mr.organization_id = m.organization_id AND mr.user_id = m.user_id
         JOIN organization_roles r ON r.id = mr.organization_role_id AND r.deleted_at IS NULL AND r.name = $2
        WHERE m.organization_id = $1 ORDER BY m.user_id FOR UPDATE OF m`,
      [organizationId, ORG_ADMIN_ROLE],
    );
    return rows.map((r) => r.user_id);
  }
}
