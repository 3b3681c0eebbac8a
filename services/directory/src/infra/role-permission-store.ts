/** Role-permission links: grant, move, revoke (never deleted), read and list. */
import type { EntityManager } from 'typeorm';
import type { LinkQuery, Page, RolePermission } from '../domain/model';
import type { RolePermissionStore } from '../domain/ports';
import { mapConflicts } from './conflicts';
import { KeysetOrder, NOT_COUNTED, count, createdUs, filters, pageOf, pageParams, withAfter } from './paging';

interface LinkRowSql {
  id: string;
  role_id: string;
  permission_id: string;
  role_name: string;
  permission_name: string;
  created_at: Date;
  updated_at: Date;
}

const LINK_SELECT = `SELECT rp.id, rp.role_id, rp.permission_id, r.name AS role_name, p.name AS permission_name, rp.created_at, rp.updated_at
  FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id`;

function toLink(r: LinkRowSql): RolePermission {
  return {
    id: r.id,
    roleId: r.role_id,
    permissionId: r.permission_id,
    roleName: r.role_name,
    permissionName: r.permission_name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class PgRolePermissionStore implements RolePermissionStore {
  constructor(private readonly m: EntityManager) {}

  async insert(l: { id: string; roleId: string; permissionId: string }): Promise<void> {
    await mapConflicts(() => this.m.query('INSERT INTO role_permissions (id, role_id, permission_id) VALUES ($1, $2, $3)', [l.id, l.roleId, l.permissionId]));
  }

  async update(id: string, patch: Partial<{ roleId: string; permissionId: string }>): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (patch.roleId !== undefined) {
      params.push(patch.roleId);
      sets.push(`role_id = $${params.length}`);
    }
    if (patch.permissionId !== undefined) {
      params.push(patch.permissionId);
      sets.push(`permission_id = $${params.length}`);
    }
    if (sets.length === 0) return;
    await mapConflicts(() => this.m.query(`UPDATE role_permissions SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async revoke(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE role_permissions SET revoked_at = now(), updated_at = now() WHERE id = $1 AND revoked_at IS NULL',
      [id],
    );
    return n > 0;
  }

  async revokeAllOf(by: { roleId?: string; permissionId?: string }): Promise<RolePermission[]> {
    const [col, value] = by.roleId ? ['role_id', by.roleId] : ['permission_id', by.permissionId];
    const rows = await this.m.query<LinkRowSql[]>(
      `WITH revoked AS (
         UPDATE role_permissions SET revoked_at = now(), updated_at = now() WHERE ${col} = $1 AND revoked_at IS NULL
         RETURNING id, role_id, permission_id, created_at, updated_at)
       SELECT v.id, v.role_id, v.permission_id, r.name AS role_name, p.name AS permission_name, v.created_at, v.updated_at
         FROM revoked v JOIN roles r ON r.id = v.role_id JOIN permissions p ON p.id = v.permission_id`,
      [value],
    );
    return rows.map(toLink);
  }

  async findById(id: string, opts: { forUpdate?: boolean } = {}): Promise<RolePermission | null> {
    const [r] = await this.m.query<LinkRowSql[]>(`${LINK_SELECT} WHERE rp.id = $1 AND rp.revoked_at IS NULL ${opts.forUpdate ? 'FOR UPDATE OF rp' : ''}`, [
      id,
    ]);
    return r ? toLink(r) : null;
  }

  async list(query: LinkQuery): Promise<Page<RolePermission>> {
    const f = filters({ ...query, includeDeleted: false }, ['r.name', 'p.name'], null);
    const parts = [f.where ? f.where.slice('WHERE '.length) : '', 'rp.revoked_at IS NULL'].filter(Boolean);
    for (const [column, value] of [['rp.role_id', query.roleId], ['rp.permission_id', query.permissionId]] as const) {
      if (value === undefined) continue;
      f.params.push(value);
      parts.push(`${column} = $${f.params.length}`);
    }
    const where = `WHERE ${parts.join(' AND ')}`;
    const from = 'FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id';
    const counted = query.after ? NOT_COUNTED : await count(this.m, `${from} ${where}`, f.params);
    const order = new KeysetOrder(query.order);
    const params = [...f.params];
    const keyset = withAfter(where, order, 'rp', query, params);
    const p = pageParams(query, params);
    const rows = await this.m.query<Array<LinkRowSql & { created_us: string }>>(
      `${LINK_SELECT.replace('SELECT ', `SELECT ${createdUs('rp')}, `)} ${keyset} ORDER BY ${order.by('rp')} LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    const page = pageOf(rows, query, order);
    return { items: page.rows.map(toLink), next: page.next, ...counted };
  }
}
