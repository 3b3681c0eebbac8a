/** Organizations: name, slug (and its lookalike key), just-in-time settings, soft delete. */
import { lookalikeKey } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page } from '../domain/model';
import type { Organization, OrganizationStore, RowLock } from '../domain/organizations';
import { mapOrganizationConflicts } from './organization-conflicts';
import { KeysetOrder, NOT_COUNTED, count, createdUs, filters, pageOf, pageParams, withAfter } from './paging';

interface OrganizationSql {
  id: string;
  name: string;
  slug: string;
  jit_enabled: boolean;
  jit_roles: string[] | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

// The names of the live roles among jit_role_ids, sorted.
const COLUMNS = (o: string) => `${o}.id, ${o}.name, ${o}.slug, ${o}.jit_enabled, ${o}.created_at, ${o}.updated_at, ${o}.deleted_at,
  ARRAY(SELECT r.name FROM organization_roles r WHERE r.id = ANY(${o}.jit_role_ids) AND r.deleted_at IS NULL ORDER BY r.name) AS jit_roles`;

const toOrganization = (r: OrganizationSql): Organization => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  jitEnabled: r.jit_enabled,
  jitRoles: r.jit_roles ?? [],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

export class PgOrganizationStore implements OrganizationStore {
  constructor(private readonly m: EntityManager) {}

  async insert(o: { id: string; name: string; slug: string }): Promise<void> {
    await mapOrganizationConflicts(() =>
      this.m.query('INSERT INTO organizations (id, name, slug, slug_skeleton) VALUES ($1, $2, $3, $4)', [o.id, o.name, o.slug, lookalikeKey(o.slug)]),
    );
  }

  async update(id: string, patch: Partial<{ name: string; slug: string; jitEnabled: boolean; jitRoleIds: readonly string[] }>): Promise<void> {
    const columns: Record<string, unknown> = {
      name: patch.name,
      slug: patch.slug,
      slug_skeleton: patch.slug === undefined ? undefined : lookalikeKey(patch.slug),
      jit_enabled: patch.jitEnabled,
      jit_role_ids: patch.jitRoleIds,
    };
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [column, value] of Object.entries(columns)) {
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}${column === 'jit_role_ids' ? '::uuid[]' : ''}`);
    }
    if (sets.length === 0) return;
    await mapOrganizationConflicts(() => this.m.query(`UPDATE organizations SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 AND deleted_at IS NULL`, params));
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE organizations SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
    return n > 0;
  }

  async findById(id: string, opts: RowLock = {}): Promise<Organization | null> {
    const lock = opts.forUpdate ? 'FOR UPDATE' : opts.forShare ? 'FOR SHARE' : '';
    const rows = await this.m.query<OrganizationSql[]>(
      `SELECT ${COLUMNS('o')} FROM organizations o WHERE o.id = $1 ${opts.includeDeleted ? '' : 'AND o.deleted_at IS NULL'} ${lock}`,
      [id],
    );
    return rows[0] ? toOrganization(rows[0]) : null;
  }

  async findBySlug(slug: string): Promise<Organization | null> {
    const rows = await this.m.query<OrganizationSql[]>(`SELECT ${COLUMNS('o')} FROM organizations o WHERE o.slug = $1 AND o.deleted_at IS NULL`, [slug.toLowerCase()]);
    return rows[0] ? toOrganization(rows[0]) : null;
  }

  async list(query: ListQuery, filter: { memberId?: string } = {}): Promise<Page<Organization>> {
    const f = filters(query, ['o.name', 'o.slug'], 'o.deleted_at');
    let where = f.where;
    if (filter.memberId) {
      f.params.push(filter.memberId);
      const cond = `EXISTS (SELECT 1 FROM organization_members m WHERE m.organization_id = o.id AND m.user_id = $${f.params.length})`;
      where = where ? `${where} AND ${cond}` : `WHERE ${cond}`;
    }
    const counted = query.after ? NOT_COUNTED : await count(this.m, `FROM organizations o ${where}`, f.params);
    const order = new KeysetOrder(query.order);
    const params = [...f.params];
    const paged = withAfter(where, order, 'o', query, params);
    const p = pageParams(query, params);
    const rows = await this.m.query<Array<OrganizationSql & { created_us: string }>>(
      `SELECT ${COLUMNS('o')}, ${createdUs('o')} FROM organizations o ${paged} ORDER BY ${order.by('o')} LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    const page = pageOf(rows, query, order);
    return { items: page.rows.map(toOrganization), next: page.next, ...counted };
  }
}
