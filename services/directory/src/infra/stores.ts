/**
 * PostgreSQL implementations of the directory's stores, bound to an EntityManager (a transaction
 * or the data source). All SQL is parameterised; search text is LIKE-escaped.
 */
import { AppError, UNIQUE_VIOLATION, escapeLike, pgConstraint, pgErrorCode } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListQuery, Page, Permission, Principal, Role, RolePermission, User } from '../domain/model';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import type { CredentialStore, PermissionStore, RolePermissionStore, RoleStore, RowLock, Stores, UserStore } from '../domain/ports';

/** Unique indexes → the conflict the caller sees. */
const CONFLICTS: Record<string, { field: string; detail: string }> = {
  uq_users_email_live: { field: 'email', detail: 'A user with this email already exists.' },
  uq_roles_name_live: { field: 'name', detail: 'A role with this name already exists.' },
  uq_permissions_name_live: { field: 'name', detail: 'A permission with this name already exists.' },
  uq_role_permissions_live: { field: 'permissionId', detail: 'The role already holds this permission.' },
};

/** Runs a write, turning a unique violation into CONFLICT. */
export async function mapConflicts<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (pgErrorCode(err) === UNIQUE_VIOLATION) {
      const c = CONFLICTS[pgConstraint(err) ?? ''];
      if (c) throw AppError.conflict(c.detail, [{ field: c.field, message: 'is already taken' }]);
    }
    throw err;
  }
}

interface Paged {
  where: string;
  params: unknown[];
}

/** `(a ILIKE $n OR b ILIKE $n …)` for the search text, plus the soft-delete filter. */
function filters(query: ListQuery, columns: readonly string[], deletedColumn: string | null, params: unknown[] = []): Paged {
  const parts: string[] = [];
  if (deletedColumn && !query.includeDeleted) parts.push(`${deletedColumn} IS NULL`);
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    const n = params.length;
    parts.push(`(${columns.map((c) => `${c} ILIKE $${n} ESCAPE '\\'`).join(' OR ')})`);
  }
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

function pageParams(query: ListQuery, params: unknown[]): { limit: string; offset: string } {
  params.push(query.pageSize, (query.page - 1) * query.pageSize);
  return { limit: `$${params.length - 1}`, offset: `$${params.length}` };
}

async function count(m: EntityManager, sql: string, params: unknown[]): Promise<number> {
  const [row] = await m.query<[{ n: string }]>(sql, params);
  return Number(row.n);
}

// ---------------------------------------------------------------------------

interface UserRowSql {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  email_verified: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

const USER_COLUMNS = 'u.id, u.first_name, u.last_name, u.email, u.phone, u.email_verified, u.created_at, u.updated_at, u.deleted_at';

class PgUserStore implements UserStore {
  constructor(private readonly m: EntityManager) {}

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
    const rows = await this.m.query<Array<UserRowSql & { role_names: string[] }>>(
      `SELECT ${USER_COLUMNS},
              ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                     WHERE ur.user_id = u.id AND r.deleted_at IS NULL ORDER BY r.name) AS role_names
         FROM users u WHERE u.id = $1 ${opts.includeDeleted ? '' : 'AND u.deleted_at IS NULL'} ${opts.forUpdate ? 'FOR UPDATE OF u' : ''}`,
      [id],
    );
    const r = rows[0];
    return r ? toUser(r, r.role_names) : null;
  }

  async list(query: ListQuery): Promise<Page<User>> {
    const f = filters(query, ['first_name', 'last_name', 'email'], 'deleted_at');
    const totalCount = await count(this.m, `SELECT count(*) AS n FROM users u ${f.where}`, f.params);
    const params = [...f.params];
    const p = pageParams(query, params);
    const rows = await this.m.query<UserRowSql[]>(
      `SELECT ${USER_COLUMNS} FROM users u ${f.where} ORDER BY u.created_at, u.id LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    return { items: await this.withRoles(rows), totalCount };
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

function toUser(r: UserRowSql, roles: string[]): User {
  return {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone === null ? null : Number(r.phone),
    emailVerified: r.email_verified,
    roles,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}

class PgCredentialStore implements CredentialStore {
  constructor(private readonly m: EntityManager) {}

  async findByEmail(email: string): Promise<{ id: string; passwordHash: string } | null> {
    const [row] = await this.m.query<Array<{
      id: string;
      password_hash: string;
    }>>('SELECT id, password_hash FROM users WHERE email = $1 AND deleted_at IS NULL', [email]);
    return row ? { id: row.id, passwordHash: row.password_hash } : null;
  }

  async setPasswordHash(userId: string, hash: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1 AND deleted_at IS NULL', [userId, hash]);
    return n > 0;
  }

  async markEmailVerified(userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE users SET email_verified = true, updated_at = now() WHERE id = $1 AND deleted_at IS NULL',
      [userId],
    );
    return n > 0;
  }

  async principal(userId: string): Promise<Principal | null> {
    const [row] = await this.m.query<PrincipalRowSql[]>(`${PRINCIPAL_SELECT} WHERE u.id = $1 AND u.deleted_at IS NULL`, [userId]);
    return row ? toPrincipal(row) : null;
  }

  async credentialsByEmail(email: string): Promise<{ passwordHash: string; principal: Principal } | null> {
    const [row] = await this.m.query<PrincipalRowSql[]>(`${PRINCIPAL_SELECT} WHERE u.email = $1 AND u.deleted_at IS NULL`, [email]);
    return row ? { passwordHash: row.password_hash, principal: toPrincipal(row) } : null;
  }
}

interface PrincipalRowSql {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  email_verified: boolean;
  password_hash: string;
  roles: string[];
  permissions: string[];
}

/** A user with live roles and the live permissions they grant, in one round trip. */
const PRINCIPAL_SELECT = `
  SELECT u.id, u.first_name, u.last_name, u.email, u.email_verified, u.password_hash,
         ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                WHERE ur.user_id = u.id AND r.deleted_at IS NULL ORDER BY r.name) AS roles,
         ARRAY(SELECT DISTINCT p.name FROM user_roles ur
                 JOIN roles r ON r.id = ur.role_id AND r.deleted_at IS NULL
                 JOIN role_permissions rp ON rp.role_id = r.id AND rp.revoked_at IS NULL
                 JOIN permissions p ON p.id = rp.permission_id AND p.deleted_at IS NULL
                WHERE ur.user_id = u.id ORDER BY p.name) AS permissions
    FROM users u`;

function toPrincipal(r: PrincipalRowSql): Principal {
  return { userId: r.id, firstName: r.first_name, lastName: r.last_name, email: r.email, roles: r.roles, permissions: r.permissions, emailVerified: r.email_verified };
}

// ---------------------------------------------------------------------------
// Roles and permissions share their shape: one implementation over two tables.

interface NamedRowSql {
  id: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

class PgNamedStore {
  constructor(
    protected readonly m: EntityManager,
    private readonly table: 'roles' | 'permissions',
  ) {}

  async insert(r: { id: string; name: string; description: string }): Promise<void> {
    await mapConflicts(() => this.m.query(`INSERT INTO ${this.table} (id, name, description) VALUES ($1, $2, $3)`, [r.id, r.name, r.description]));
  }

  async update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const k of ['name', 'description'] as const) {
      if (patch[k] === undefined) continue;
      params.push(patch[k]);
      sets.push(`${k} = $${params.length}`);
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

  protected async listRows(query: ListQuery): Promise<{ rows: NamedRowSql[]; totalCount: number }> {
    const f = filters(query, ['name', 'description'], 'deleted_at');
    const totalCount = await count(this.m, `SELECT count(*) AS n FROM ${this.table} ${f.where}`, f.params);
    const params = [...f.params];
    const p = pageParams(query, params);
    const rows = await this.m.query<NamedRowSql[]>(
      `SELECT id, name, description, created_at, updated_at, deleted_at FROM ${this.table} ${f.where}
        ORDER BY created_at, id LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    return { rows, totalCount };
  }
}

function toPermission(r: NamedRowSql): Permission {
  return { id: r.id, name: r.name, description: r.description, createdAt: r.created_at, updatedAt: r.updated_at, deletedAt: r.deleted_at };
}

class PgPermissionStore extends PgNamedStore implements PermissionStore {
  constructor(m: EntityManager) {
    super(m, 'permissions');
  }

  async findById(id: string, opts: RowLock = {}): Promise<Permission | null> {
    const [r] = await this.findRows(id, opts);
    return r ? toPermission(r) : null;
  }

  async list(query: ListQuery): Promise<Page<Permission>> {
    const { rows, totalCount } = await this.listRows(query);
    return { items: rows.map(toPermission), totalCount };
  }
}

class PgRoleStore extends PgNamedStore implements RoleStore {
  constructor(m: EntityManager) {
    super(m, 'roles');
  }

  async findById(id: string, opts: RowLock = {}): Promise<Role | null> {
    return (await this.withPermissions(await this.findRows(id, opts)))[0] ?? null;
  }

  async list(query: ListQuery): Promise<Page<Role>> {
    const { rows, totalCount } = await this.listRows(query);
    return { items: await this.withPermissions(rows), totalCount };
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
    return rows.map((r) => ({ ...toPermission(r), permissions: perms.filter((p) => p.role_id === r.id).map((p) => p.name) }));
  }
}

// ---------------------------------------------------------------------------

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

class PgRolePermissionStore implements RolePermissionStore {
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

  async list(query: ListQuery): Promise<Page<RolePermission>> {
    const f = filters({ ...query, includeDeleted: false }, ['r.name', 'p.name'], null);
    const where = f.where ? `${f.where} AND rp.revoked_at IS NULL` : 'WHERE rp.revoked_at IS NULL';
    const from = 'FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id';
    const totalCount = await count(this.m, `SELECT count(*) AS n ${from} ${where}`, f.params);
    const params = [...f.params];
    const p = pageParams(query, params);
    const rows = await this.m.query<LinkRowSql[]>(`${LINK_SELECT} ${where} ORDER BY rp.created_at, rp.id LIMIT ${p.limit} OFFSET ${p.offset}`, params);
    return { items: rows.map(toLink), totalCount };
  }
}

export function pgStores(m: EntityManager): Stores {
  return {
    users: new PgUserStore(m),
    credentials: new PgCredentialStore(m),
    roles: new PgRoleStore(m),
    permissions: new PgPermissionStore(m),
    links: new PgRolePermissionStore(m),
  };
}

export { ADMINISTRATOR_ROLE };
