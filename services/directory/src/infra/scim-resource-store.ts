/**
 * The SCIM resources' rows: provisioned users (scim_users joined with the platform's user) and
 * organization groups. Every statement carries `organization_id = $1`; a list's filter arrives
 * as a parameterised condition (scim-filter.ts) numbered after the organization's `$1`, and its
 * order as one of the fixed expressions of the attribute map, never as caller text.
 */
import type { EntityManager } from 'typeorm';
import type { ScimGroupRow, ScimGroupStore, ScimListQuery, ScimUserRow, ScimUserStore } from '../domain/scim';
import { mapConflicts } from './conflicts';

interface UserSql {
  organization_id: string;
  user_id: string;
  connection_id: string;
  external_id: string | null;
  user_name: string;
  email: string;
  first_name: string;
  last_name: string;
  active: boolean;
  attributes: Record<string, unknown>;
  version: string;
  created_at: Date;
  updated_at: Date;
}

const USER_SELECT = `SELECT s.organization_id, s.user_id, s.connection_id, s.external_id, s.user_name, u.email, u.first_name, u.last_name,
  (u.disabled_at IS NULL) AS active, s.attributes, s.version::text || '.' || (extract(epoch FROM u.updated_at) * 1000000)::int8::text AS version,
  s.created_at, greatest(s.updated_at, u.updated_at) AS updated_at
  FROM scim_users s JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL`;

const toUser = (r: UserSql): ScimUserRow => ({
  userId: r.user_id,
  organizationId: r.organization_id,
  connectionId: r.connection_id,
  externalId: r.external_id,
  userName: r.user_name,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  active: r.active,
  attributes: r.attributes,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** `WHERE organization = $1 AND (filter)`, the filter's parameters after the organization's. */
function where(organizationColumn: string, organizationId: string, q: ScimListQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [organizationId, ...(q.where?.params ?? [])];
  return { sql: `${organizationColumn} = $1${q.where ? ` AND (${q.where.sql})` : ''}`, params };
}

const order = (q: ScimListQuery, fallback: string) => (q.sortBy ? `${q.sortBy} ${q.descending ? 'DESC' : 'ASC'} NULLS LAST, ${fallback}` : fallback);

export class PgScimUserStore implements ScimUserStore {
  constructor(private readonly m: EntityManager) {}

  async insert(r: { organizationId: string; userId: string; connectionId: string; userName: string; externalId: string | null; attributes: Record<string, unknown> }): Promise<void> {
    await mapConflicts(() =>
      this.m.query('INSERT INTO scim_users (organization_id, user_id, connection_id, user_name, user_name_key, external_id, attributes) VALUES ($1, $2, $3, $4, lower($4), $5, $6)', [
        r.organizationId,
        r.userId,
        r.connectionId,
        r.userName,
        r.externalId,
        JSON.stringify(r.attributes),
      ]),
    );
  }

  async find(organizationId: string, userId: string, opts: { forUpdate?: boolean } = {}): Promise<ScimUserRow | null> {
    const [row] = await this.m.query<UserSql[]>(`${USER_SELECT} WHERE s.organization_id = $1 AND s.user_id = $2 ${opts.forUpdate ? 'FOR UPDATE OF s' : ''}`, [organizationId, userId]);
    return row ? toUser(row) : null;
  }

  async update(organizationId: string, userId: string, r: { userName: string; externalId: string | null; attributes: Record<string, unknown> }): Promise<void> {
    await mapConflicts(() =>
      this.m.query(
        'UPDATE scim_users SET user_name = $5, user_name_key = lower($5), external_id = $3, attributes = $4, version = version + 1, updated_at = now() WHERE organization_id = $1 AND user_id = $2',
        [
        organizationId,
        userId,
        r.externalId,
        JSON.stringify(r.attributes),
        r.userName,
      ]),
    );
  }

  async list(organizationId: string, q: ScimListQuery): Promise<{ items: ScimUserRow[]; totalResults: number }> {
    const w = where('s.organization_id', organizationId, q);
    const [{ n }] = await this.m.query<[{ n: string }]>(`SELECT count(*) AS n FROM scim_users s JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL WHERE ${w.sql}`, w.params);
    if (q.count === 0) return { items: [], totalResults: Number(n) };
    const rows = await this.m.query<UserSql[]>(`${USER_SELECT} WHERE ${w.sql} ORDER BY ${order(q, 's.created_at, s.user_id')} LIMIT $${w.params.length + 1} OFFSET $${w.params.length + 2}`, [
      ...w.params,
      q.count,
      q.offset,
    ]);
    return { items: rows.map(toUser), totalResults: Number(n) };
  }

  async organizationsOf(userId: string): Promise<number> {
    const [{ n }] = await this.m.query<[{ n: number }]>(
      'SELECT count(*)::int AS n FROM organization_members m JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL WHERE m.user_id = $1',
      [userId],
    );
    return n;
  }

  async setActive(userId: string, active: boolean): Promise<void> {
    await this.m.query(`UPDATE users SET disabled_at = ${active ? 'NULL' : 'now()'}, updated_at = now() WHERE id = $1 AND (disabled_at IS NULL) = $2`, [userId, !active]);
  }
}

interface GroupSql {
  id: string;
  organization_id: string;
  display_name: string;
  external_id: string | null;
  roles: string[] | null;
  members: Array<{ userId: string; display: string }> | null;
  version: string;
  created_at: Date;
  updated_at: Date;
}

const MEMBERS = `(SELECT coalesce(json_agg(json_build_object('userId', gm.user_id, 'display', u.email) ORDER BY u.email), '[]')
    FROM organization_group_members gm JOIN users u ON u.id = gm.user_id AND u.deleted_at IS NULL WHERE gm.group_id = g.id)`;

const groupSelect = (withoutMembers = false) => `SELECT g.id, g.organization_id, g.display_name, g.external_id, g.version::text AS version, g.created_at, g.updated_at,
  ARRAY(SELECT r.name FROM organization_roles r WHERE r.id = ANY(g.role_ids) AND r.deleted_at IS NULL ORDER BY r.name) AS roles,
  ${withoutMembers ? `'[]'::json` : MEMBERS} AS members
  FROM organization_groups g`;

const toGroup = (r: GroupSql): ScimGroupRow => ({
  id: r.id,
  organizationId: r.organization_id,
  displayName: r.display_name,
  externalId: r.external_id,
  roles: r.roles ?? [],
  members: r.members ?? [],
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class PgScimGroupStore implements ScimGroupStore {
  constructor(private readonly m: EntityManager) {}

  async insert(g: { id: string; organizationId: string; displayName: string; externalId: string | null; connectionId: string; roleIds: readonly string[] }): Promise<void> {
    await mapConflicts(() =>
      this.m.query('INSERT INTO organization_groups (id, organization_id, display_name, display_key, external_id, connection_id, role_ids) VALUES ($1, $2, $3, lower($3), $4, $5, $6)', [
        g.id,
        g.organizationId,
        g.displayName,
        g.externalId,
        g.connectionId,
        g.roleIds,
      ]),
    );
  }

  async find(organizationId: string, id: string, opts: { forUpdate?: boolean; withoutMembers?: boolean } = {}): Promise<ScimGroupRow | null> {
    const [row] = await this.m.query<GroupSql[]>(`${groupSelect(opts.withoutMembers)} WHERE g.organization_id = $1 AND g.id = $2 ${opts.forUpdate ? 'FOR UPDATE OF g' : ''}`, [organizationId, id]);
    return row ? toGroup(row) : null;
  }

  async update(organizationId: string, id: string, g: { displayName: string; externalId: string | null; roleIds: readonly string[] }): Promise<void> {
    await mapConflicts(() =>
      this.m.query(
        'UPDATE organization_groups SET display_name = $3, display_key = lower($3), external_id = $4, role_ids = $5, version = version + 1, updated_at = now() WHERE organization_id = $1 AND id = $2',
        [organizationId, id, g.displayName, g.externalId, g.roleIds],
      ),
    );
  }

  async remove(organizationId: string, id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM organization_groups WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    return n > 0;
  }

  async setMembers(organizationId: string, id: string, userIds: readonly string[]): Promise<void> {
    await this.m.query('DELETE FROM organization_group_members WHERE organization_id = $1 AND group_id = $2 AND NOT (user_id = ANY($3::uuid[]))', [organizationId, id, userIds]);
    if (userIds.length > 0) {
      await this.m.query('INSERT INTO organization_group_members (organization_id, group_id, user_id) SELECT $1, $2, unnest($3::uuid[]) ON CONFLICT DO NOTHING', [organizationId, id, userIds]);
    }
    await this.m.query('UPDATE organization_groups SET version = version + 1, updated_at = now() WHERE organization_id = $1 AND id = $2', [organizationId, id]);
  }

  async list(organizationId: string, q: ScimListQuery): Promise<{ items: ScimGroupRow[]; totalResults: number }> {
    const w = where('g.organization_id', organizationId, q);
    const [{ n }] = await this.m.query<[{ n: string }]>(`SELECT count(*) AS n FROM organization_groups g WHERE ${w.sql}`, w.params);
    if (q.count === 0) return { items: [], totalResults: Number(n) };
    const rows = await this.m.query<GroupSql[]>(`${groupSelect(q.withoutMembers)} WHERE ${w.sql} ORDER BY ${order(q, 'g.created_at, g.id')} LIMIT $${w.params.length + 1} OFFSET $${w.params.length + 2}`, [
      ...w.params,
      q.count,
      q.offset,
    ]);
    return { items: rows.map(toGroup), totalResults: Number(n) };
  }

  async membersAmong(organizationId: string, userIds: readonly string[]): Promise<string[]> {
    const rows = await this.m.query<Array<{ user_id: string }>>(
      `SELECT m.user_id FROM organization_members m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL WHERE m.organization_id = $1 AND m.user_id = ANY($2::uuid[])`,
      [organizationId, userIds],
    );
    return rows.map((r) => r.user_id);
  }
}
