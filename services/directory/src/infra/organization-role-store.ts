/** The organization role template: roles defined once for the platform, each granting live permissions. */
import { lookalikeKey } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page } from '../domain/model';
import type { OrganizationRole, OrganizationRoleStore, RowLock } from '../domain/organizations';
import { mapOrganizationConflicts } from './organization-conflicts';
import { KeysetOrder, NOT_COUNTED, count, createdUs, filters, pageOf, pageParams, withAfter } from './paging';

interface RoleSql {
  id: string;
  name: string;
  description: string;
  permissions: string[] | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

const COLUMNS = `r.id, r.name, r.description, r.created_at, r.updated_at, r.deleted_at,
  ARRAY(SELECT p.name FROM organization_role_permissions rp JOIN permissions p ON p.id = rp.permission_id
         WHERE rp.organization_role_id = r.id AND p.deleted_at IS NULL ORDER BY p.name) AS permissions`;

const toRole = (r: RoleSql): OrganizationRole => ({
  id: r.id,
  name: r.name,
  description: r.description,
  permissions: r.permissions ?? [],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

export class PgOrganizationRoleStore implements OrganizationRoleStore {
  constructor(private readonly m: EntityManager) {}

  async insert(r: { id: string; name: string; description: string }): Promise<void> {
    await mapOrganizationConflicts(() =>
      this.m.query('INSERT INTO organization_roles (id, name, name_skeleton, description) VALUES ($1, $2, $3, $4)', [r.id, r.name, lookalikeKey(r.name), r.description]),
    );
  }

  async update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void> {
    const columns = { name: patch.name, name_skeleton: patch.name === undefined ? undefined : lookalikeKey(patch.name), description: patch.description };
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [column, value] of Object.entries(columns)) {
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length === 0) return;
    await mapOrganizationConflicts(() => this.m.query(`UPDATE organization_roles SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE organization_roles SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
    if (n > 0) await this.m.query('DELETE FROM organization_member_roles WHERE organization_role_id = $1', [id]);
    return n > 0;
  }

  async findById(id: string, opts: RowLock = {}): Promise<OrganizationRole | null> {
    const lock = opts.forUpdate ? 'FOR UPDATE OF r' : opts.forShare ? 'FOR SHARE OF r' : '';
    const rows = await this.m.query<RoleSql[]>(`SELECT ${COLUMNS} FROM organization_roles r WHERE r.id = $1 ${opts.includeDeleted ? '' : 'AND r.deleted_at IS NULL'} ${lock}`, [id]);
    return rows[0] ? toRole(rows[0]) : null;
  }

  async list(query: ListQuery): Promise<Page<OrganizationRole>> {
    const f = filters(query, ['r.name', 'r.description'], 'r.deleted_at');
    const counted = query.after ? NOT_COUNTED : await count(this.m, `FROM organization_roles r ${f.where}`, f.params);
    const order = new KeysetOrder(query.order);
    const params = [...f.params];
    const where = withAfter(f.where, order, 'r', query, params);
    const p = pageParams(query, params);
    const rows = await this.m.query<Array<RoleSql & { created_us: string }>>(
      `SELECT ${COLUMNS}, ${createdUs('r')} FROM organization_roles r ${where} ORDER BY ${order.by('r')} LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    const page = pageOf(rows, query, order);
    return { items: page.rows.map(toRole), next: page.next, ...counted };
  }

  async findLiveByNames(names: readonly string[]): Promise<OrganizationRole[]> {
    if (names.length === 0) return [];
    const rows = await this.m.query<RoleSql[]>(
      `SELECT ${COLUMNS} FROM organization_roles r WHERE r.deleted_at IS NULL AND lower(r.name) = ANY($1::text[]) ORDER BY r.id FOR SHARE OF r`,
      [names.map((n) => n.toLowerCase())],
    );
    return rows.map(toRole);
  }

  async setPermissions(roleId: string, permissionIds: readonly string[]): Promise<void> {
    await this.m.query('DELETE FROM organization_role_permissions WHERE organization_role_id = $1 AND NOT (permission_id = ANY($2::uuid[]))', [roleId, permissionIds]);
    if (permissionIds.length > 0) {
      await this.m.query('INSERT INTO organization_role_permissions (organization_role_id, permission_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING', [roleId, permissionIds]);
    }
    await this.m.query('UPDATE organization_roles SET updated_at = now() WHERE id = $1', [roleId]);
  }
}
