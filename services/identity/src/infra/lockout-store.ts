/** PostgreSQL store of failed sign-ins per email digest: the lockout reservation. */
import { queryNamed } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { LockoutStore } from '../domain/ports';

/**
 * One statement: concurrent attempts serialise on the row. A locked row is left as it is (no row
 * returned: refused); an expired lock starts the count again; the max-th reservation locks.
 */
const RESERVE_SQL = `INSERT INTO login_failures AS f (email_hash, failed_count, locked_until, last_failed_at)
       VALUES ($1, 1, CASE WHEN 1 >= $2 THEN now() + make_interval(mins => $3) END, now())
       ON CONFLICT (email_hash) DO UPDATE SET
         failed_count = CASE WHEN f.locked_until IS NOT NULL THEN 1 ELSE f.failed_count + 1 END,
         locked_until = CASE WHEN (CASE WHEN f.locked_until IS NOT NULL THEN 1 ELSE f.failed_count + 1 END) >= $2
                             THEN now() + make_interval(mins => $3) END,
         last_failed_at = now()
       WHERE f.locked_until IS NULL OR f.locked_until <= now()
       RETURNING failed_count`;

export class PgLockouts implements LockoutStore {
  constructor(private readonly m: EntityManager) {}

  async reserve(emailHash: Buffer, max: number, lockMinutes: number): Promise<{ allowed: boolean; count: number }> {
    // Every login's first statement, outside a transaction: a named statement (queryNamed).
    const [row] = await queryNamed<{ failed_count: number }>(this.m, 'identity.login.reserve', RESERVE_SQL, [emailHash, max, lockMinutes]);
    return row ? { allowed: true, count: row.failed_count } : { allowed: false, count: max };
  }

  async release(emailHash: Buffer, max: number): Promise<void> {
    await this.m.query(
      `UPDATE login_failures SET failed_count = greatest(failed_count - 1, 0),
              locked_until = CASE WHEN failed_count - 1 < $2 THEN NULL ELSE locked_until END
        WHERE email_hash = $1`,
      [emailHash, max],
    );
  }

  async clear(emailHash: Buffer): Promise<void> {
    await this.m.query('DELETE FROM login_failures WHERE email_hash = $1', [emailHash]);
  }

  async state(emailHash: Buffer): Promise<{ failedCount: number; lockedUntil: Date | null } | null> {
    const [r] = await this.m.query<Array<{ failed_count: number; locked_until: Date | null }>>(
      'SELECT failed_count, CASE WHEN locked_until > now() THEN locked_until END AS locked_until FROM login_failures WHERE email_hash = $1',
      [emailHash],
    );
    return r ? { failedCount: r.failed_count, lockedUntil: r.locked_until } : null;
  }
}
