/**
 * Privileged: the password hashes (read and written), the email-verified flag and the records of
 * applied password resets. Only the credential use cases get it (pgPrivilegedStores).
 */
import { queryNamed } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CredentialStore, StoredCredentials } from '../domain/ports';
import { type PrincipalRowSql, principalSelect, toPrincipal } from './principal-store';

/** The login read: the principal and the hash of the live user with the (normalised) email. */
const BY_EMAIL = `${principalSelect(', u.password_hash, u.password_migration, u.external_id, u.password_change_required')} WHERE u.email = $1 AND u.deleted_at IS NULL AND u.disabled_at IS NULL`;

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
    // A new password (a reset) ends a pending hook migration too, and is the change an import asked for.
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE users SET password_hash = $2, password_migration = NULL, password_change_required = false, updated_at = now() WHERE id = $1 AND deleted_at IS NULL',
      [userId, hash],
    );
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

  async credentialsByEmail(email: string): Promise<StoredCredentials | null> {
    type Row = PrincipalRowSql & { password_hash: string; password_migration: string | null; external_id: string | null; password_change_required: boolean };
    const [row] = await queryNamed<Row>(this.m, 'directory.principal.byEmail', BY_EMAIL, [email]);
    if (!row) return null;
    return {
      passwordHash: row.password_hash,
      passwordMigration: row.password_migration === 'hook' ? 'hook' : null,
      externalId: row.external_id,
      passwordChangeRequired: row.password_change_required,
      principal: toPrincipal(row),
    };
  }

  async passwordChangeRequired(userId: string): Promise<{ passwordHash: string } | null> {
    const [row] = await this.m.query<Array<{ password_hash: string }>>(
      'SELECT password_hash FROM users WHERE id = $1 AND password_change_required AND deleted_at IS NULL FOR UPDATE',
      [userId],
    );
    return row ? { passwordHash: row.password_hash } : null;
  }

  async replacePasswordHash(userId: string, expected: string, hash: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE users SET password_hash = $3, password_migration = NULL, updated_at = now() WHERE id = $1 AND password_hash = $2 AND deleted_at IS NULL',
      [userId, expected, hash],
    );
    return n > 0;
  }

  async completeMigration(userId: string, hash: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE users SET password_hash = $2, password_migration = NULL, updated_at = now() WHERE id = $1 AND password_migration = 'hook' AND deleted_at IS NULL`,
      [userId, hash],
    );
    return n > 0;
  }
}

/**
 * Removes what can no longer matter: the records of password resets applied more than 30 days ago.
 * The reset's email-action token expired long before (identity refuses it before asking here), so
 * no retry of that reset can arrive any more.
 */
export async function purgeExpired(ds: DataSource): Promise<void> {
  await ds.query(`DELETE FROM password_resets WHERE changed_at < now() - interval '30 days'`);
}
