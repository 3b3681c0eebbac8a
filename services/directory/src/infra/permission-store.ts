/** Permissions: names unique (and lookalike-unique) among live ones, description, soft delete. */
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page, Permission } from '../domain/model';
import type { PermissionStore, RowLock } from '../domain/ports';
import { type NamedRowSql, PgNamedStore, toNamed } from './named-store';

export class PgPermissionStore extends PgNamedStore implements PermissionStore {
  constructor(m: EntityManager) {
    super(m, 'permissions');
  }

  async findById(id: string, opts: RowLock = {}): Promise<Permission | null> {
    const [r] = await this.findRows(id, opts);
    return r ? toNamed(r) : null;
  }

  async list(query: ListQuery): Promise<Page<Permission>> {
    const { rows, ...counted } = await this.listRows(query);
    return { items: rows.map(toNamed), ...counted };
  }

  async findLiveByNames(names: readonly string[]): Promise<Array<{ id: string; name: string; description: string }>> {
    if (names.length === 0) return [];
    const rows = await this.m.query<NamedRowSql[]>(
      'SELECT id, name, description, created_at, updated_at, deleted_at FROM permissions WHERE deleted_at IS NULL AND lower(name) = ANY($1::text[]) ORDER BY name',
      [names.map((n) => n.toLowerCase())],
    );
    return rows.map((r) => ({ id: r.id, name: r.name, description: r.description }));
  }
}
