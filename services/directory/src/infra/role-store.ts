/** Roles, each with the names of the live permissions it grants. */
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page, Role } from '../domain/model';
import type { RoleStore, RowLock } from '../domain/ports';
import { type NamedRowSql, PgNamedStore, toNamed } from './named-store';

export class PgRoleStore extends PgNamedStore implements RoleStore {
  constructor(m: EntityManager) {
    super(m, 'roles');
  }

  async findById(id: string, opts: RowLock = {}): Promise<Role | null> {
    return (await this.withPermissions(await this.findRows(id, opts)))[0] ?? null;
  }

  async list(query: ListQuery): Promise<Page<Role>> {
    const { rows, ...counted } = await this.listRows(query);
    return { items: await this.withPermissions(rows), ...counted };
  }

  async findLiveByNames(names: readonly string[]): Promise<Array<{ id: string; name: string; permissions: string[] }>> {
    if (names.length === 0) return [];
    const rows = await this.m.query<NamedRowSql[]>(
      'SELECT id, name, description, created_at, updated_at, deleted_at FROM roles WHERE deleted_at IS NULL AND lower(name) = ANY($1::text[]) ORDER BY id FOR SHARE',
      [
        names.map((n) => n.toLowerCase()),
      ],
    );
    return (await this.withPermissions(rows)).map((r) => ({ id: r.id, name: r.name, permissions: [...r.permissions] }));
  }

  private async withPermissions(rows: NamedRowSql[]): Promise<Role[]> {
    if (rows.length === 0) return [];
    const perms = await this.m.query<Array<{ role_id: string; name: string }>>(
      `SELECT rp.role_id, p.name FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
        WHERE rp.role_id = ANY($1::uuid[]) AND rp.revoked_at IS NULL AND p.deleted_at IS NULL ORDER BY p.name`,
      [rows.map((r) => r.id)],
    );
    return rows.map((r) => ({ ...toNamed(r), permissions: perms.filter((p) => p.role_id === r.id).map((p) => p.name) }));
  }
}
