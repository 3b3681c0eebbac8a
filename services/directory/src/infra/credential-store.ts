/**
 * Privileged: the password hashes (read and written), the records of applied password resets and
 * the principal a login or a refresh puts in its token. Only the credential use cases get it.
 */
import { queryNamed } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../domain/model';
import type { CredentialStore } from '../domain/ports';

export class PgCredentialStore implements CredentialStore {
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

  async recordPasswordReset(r: { resetId: string; userId: string; attemptId: string }): Promise<{ first: boolean; userId: string; attemptId: string; changedAt: Date }> {
    const [inserted] = await this.m.query<Array<{ changed_at: Date }>>(
      'INSERT INTO password_resets (reset_id, user_id, attempt_id) VALUES ($1, $2, $3) ON CONFLICT (reset_id) DO NOTHING RETURNING changed_at',
      [r.resetId, r.userId, r.attemptId],
    );
    if (inserted) return { first: true, userId: r.userId, attemptId: r.attemptId, changedAt: inserted.changed_at };
    const [prior] = await this.m.query<Array<{ user_id: string; attempt_id: string; changed_at: Date }>>(
      'SELECT user_id, attempt_id, changed_at FROM password_resets WHERE reset_id = $1',
      [r.resetId],
    );
    return { first: false, userId: prior!.user_id, attemptId: prior!.attempt_id, changedAt: prior!.changed_at };
  }

  async markEmailVerified(userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE users SET email_verified = true, updated_at = now() WHERE id = $1 AND deleted_at IS NULL',
      [userId],
    );
    return n > 0;
  }

  // Every refresh and login asks for a principal: outside a transaction a named statement
  // (planning the two sub-selects was about 1.3 ms of the 1.7 ms each call spent in PostgreSQL,
  // bench/README.md "Refresh rotations").
  async principal(userId: string): Promise<Principal | null> {
    const [row] = await queryNamed<PrincipalRowSql>(this.m, 'directory.principal.byId', `${PRINCIPAL_SELECT} WHERE u.id = $1 AND u.deleted_at IS NULL`, [userId]);
    return row ? toPrincipal(row) : null;
  }

  async credentialsByEmail(email: string): Promise<{ passwordHash: string; principal: Principal } | null> {
    const [row] = await queryNamed<PrincipalRowSql>(this.m, 'directory.principal.byEmail', `${PRINCIPAL_SELECT} WHERE u.email = $1 AND u.deleted_at IS NULL`, [email]);
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

/**
 * Removes what can no longer matter: the records of password resets applied more than 30 days ago.
 * The reset's email-action token expired long before (identity refuses it before asking here), so
 * no retry of that reset can arrive any more.
 */
export async function purgeExpired(ds: DataSource): Promise<void> {
  await ds.query(`DELETE FROM password_resets WHERE changed_at < now() - interval '30 days'`);
}
