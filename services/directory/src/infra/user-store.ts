/** The users: profile, soft delete, role assignments, reads and lists (the search in user-search.ts). */
import { queryNamed } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page, User } from '../domain/model';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import type { UserStore } from '../domain/ports';
import { mapConflicts } from './conflicts';
import { KeysetOrder, NOT_COUNTED, count, pageOf, pageParams, withAfter } from './paging';
import { USER_COLUMNS, type UserRowSql, toUser } from './user-rows';
import { type UserSearch, userFilters } from './user-search';

export class PgUserStore implements UserStore {
  constructor(
    private readonly m: EntityManager,
    private readonly search: UserSearch,
  ) {}

  async insert(u: { id: string; firstName: string; lastName: string; email: string; phone: number | null; passwordHash: string }): Promise<void> {
    await mapConflicts(() =>
      this.m.query(
        `INSERT INTO users (id, first_name, last_name, email, phone, password_hash) VALUES ($1, $2, $3, $4, $5, $6)`,
        [u.id, u.firstName, u.lastName, u.email, u.phone, u.passwordHash],
      ),
    );
  }

  async update(id: string, patch: Partial<{ firstName: string; lastName: string; email: string; phone: number | null; passwordHash: string; emailVerified: boolean }>): Promise<void> {
    const columns: Record<string, string> = {
      firstName: 'first_name',
      lastName: 'last_name',
      email: 'email',
      phone: 'phone',
      passwordHash: 'password_hash',
      emailVerified: 'email_verified',
    };
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [k, col] of Object.entries(columns)) {
      const v = (patch as Record<string, unknown>)[k];
      if (v === undefined) continue;
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    }
    if (sets.length === 0) return;
    // A password set here ends a pending hook migration (the legacy system is not asked again).
    // A new password ends a pending hook migration, and is the change an import asked for.
    if (patch.passwordHash !== undefined) sets.push('password_migration = NULL', 'password_change_required = false');
    await mapConflicts(() => this.m.query(`UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async setRoles(userId: string, roleIds: readonly string[]): Promise<void> {
    await this.m.query('DELETE FROM user_roles WHERE user_id = $1 AND NOT (role_id = ANY($2::uuid[]))', [userId, roleIds]);
    if (roleIds.length > 0) {
      await this.m.query(
        `INSERT INTO user_roles (user_id, role_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING`,
        [userId, roleIds],
      );
    }
    await this.m.query('UPDATE users SET updated_at = now() WHERE id = $1', [userId]);
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE users SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
    return n > 0;
  }

  async findById(id: string, opts: { includeDeleted?: boolean; forUpdate?: boolean } = {}): Promise<User | null> {
    // One round trip: the row and its live role names (FOR UPDATE locks only the user row).
    const sql = `SELECT ${USER_COLUMNS},
              ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                     WHERE ur.user_id = u.id AND r.deleted_at IS NULL ORDER BY r.name) AS role_names
         FROM users u WHERE u.id = $1 ${opts.includeDeleted ? '' : 'AND u.deleted_at IS NULL'} ${opts.forUpdate ? 'FOR UPDATE OF u' : ''}`;
    // The read path (GET by id, outside a transaction): a named statement (queryNamed); the
    // locking read has its own text and runs in a transaction, unnamed.
    type Row = UserRowSql & { role_names: string[] };
    const [r] = opts.forUpdate
      ? await this.m.query<Row[]>(sql, [id])
      : await queryNamed<Row>(this.m, opts.includeDeleted ? 'directory.users.byIdAny' : 'directory.users.byId', sql, [id]);
    return r ? toUser(r, r.role_names) : null;
  }

  async list(query: ListQuery): Promise<Page<User>> {
    if (query.q) {
      const { rows, ...counted } = await this.search.page(this.m, query);
      return { items: await this.withRoles(rows), ...counted };
    }
    const f = userFilters(query);
    const order = new KeysetOrder(query.order);
    const params = [...f.params];
    const where = withAfter(f.where, order, 'u', query, params);
    const p = pageParams(query, params);
    // The count and the page on two pool connections at once (one after the other inside a
    // transaction): the latency is the slower of the two, not their sum. A keyset page is not counted.
    const [counted, rows] = await Promise.all([
      query.after ? NOT_COUNTED : count(this.m, `FROM users u ${f.where}`, f.params),
      this.m.query<UserRowSql[]>(`SELECT ${USER_COLUMNS} FROM users u ${where} ORDER BY ${order.by('u')} LIMIT ${p.limit} OFFSET ${p.offset}`, params),
    ]);
    const page = pageOf(rows, query, order);
    return { items: await this.withRoles(page.rows), next: page.next, ...counted };
  }

  async lockAdministrators(): Promise<string[]> {
    const [role] = await this.m.query<Array<{ id: string }>>('SELECT id FROM roles WHERE name = $1 AND deleted_at IS NULL FOR UPDATE', [ADMINISTRATOR_ROLE]);
    if (!role) return [];
    const rows = await this.m.query<Array<{ user_id: string }>>(
      'SELECT ur.user_id FROM user_roles ur JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL WHERE ur.role_id = $1',
      [role.id],
    );
    return rows.map((r) => r.user_id);
  }

  private async withRoles(rows: UserRowSql[]): Promise<User[]> {
    if (rows.length === 0) return [];
    const roles = await this.m.query<Array<{ user_id: string; name: string }>>(
      `SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
        WHERE ur.user_id = ANY($1::uuid[]) AND r.deleted_at IS NULL ORDER BY r.name`,
      [rows.map((r) => r.id)],
    );
    return rows.map((r) => toUser(r, roles.filter((x) => x.user_id === r.id).map((x) => x.name)));
  }
}
