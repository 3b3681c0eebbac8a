/** Roles and permissions share their shape: one implementation over two tables. */
import { lookalikeKey } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListPosition, ListQuery, Permission } from '../domain/model';
import type { RowLock } from '../domain/ports';
import { mapConflicts } from './conflicts';
import { KeysetOrder, NOT_COUNTED, count, createdUs, filters, pageOf, pageParams, withAfter } from './paging';

export interface NamedRowSql {
  id: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export class PgNamedStore {
  constructor(
    protected readonly m: EntityManager,
    private readonly table: 'roles' | 'permissions',
  ) {}

  // name_skeleton is the name's lookalikeKey, unique among live rows (migration 1764600000100).
  async insert(r: { id: string; name: string; description: string }): Promise<void> {
    await mapConflicts(() =>
      this.m.query(`INSERT INTO ${this.table} (id, name, name_skeleton, description) VALUES ($1, $2, $3, $4)`, [r.id, r.name, lookalikeKey(r.name), r.description]),
    );
  }

  async update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const columns = { name: patch.name, name_skeleton: patch.name === undefined ? undefined : lookalikeKey(patch.name), description: patch.description };
    for (const [column, value] of Object.entries(columns)) {
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length === 0) return;
    await mapConflicts(() => this.m.query(`UPDATE ${this.table} SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(`UPDATE ${this.table} SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL`, [id]);
    return n > 0;
  }

  protected async findRows(id: string, opts: RowLock): Promise<NamedRowSql[]> {
    const lock = opts.forUpdate ? 'FOR UPDATE' : opts.forShare ? 'FOR SHARE' : '';
    return await this.m.query<NamedRowSql[]>(
      `SELECT id, name, description, created_at, updated_at, deleted_at FROM ${this.table}
        WHERE id = $1 ${opts.includeDeleted ? '' : 'AND deleted_at IS NULL'} ${lock}`,
      [id],
    );
  }

  /** A page in the query's order; a keyset page (`after`) is not counted (NOT_COUNTED). */
  protected async listRows(query: ListQuery): Promise<{ rows: NamedRowSql[]; totalCount: number; totalCountExact: boolean; next?: ListPosition }> {
    const t = this.table;
    const f = filters(query, ['name', 'description'], 'deleted_at');
    const counted = query.after ? NOT_COUNTED : await count(this.m, `FROM ${t} ${f.where}`, f.params);
    const order = new KeysetOrder(query.order);
    const params = [...f.params];
    const where = withAfter(f.where, order, t, query, params);
    const p = pageParams(query, params);
    const rows = await this.m.query<Array<NamedRowSql & { created_us: string }>>(
      `SELECT id, name, description, created_at, updated_at, deleted_at, ${createdUs(t)} FROM ${t} ${where}
        ORDER BY ${order.by(t)} LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    return { ...pageOf(rows, query, order), ...counted };
  }
}

/** A role's or a permission's own fields. */
export function toNamed(r: NamedRowSql): Permission {
  return { id: r.id, name: r.name, description: r.description, createdAt: r.created_at, updatedAt: r.updated_at, deletedAt: r.deleted_at };
}
