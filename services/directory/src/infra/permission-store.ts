/** Permissions: names unique (and lookalike-unique) among live ones, description, soft delete. */
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page, Permission } from '../domain/model';
import type { PermissionStore, RowLock } from '../domain/ports';
import { PgNamedStore, toNamed } from './named-store';

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
}
