/** PostgreSQL store of revoked subjects: every token of a user issued before a time refused. */
import { isUuid } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { SubjectRevocationStore } from '../domain/ports';

export class PgSubjects implements SubjectRevocationStore {
  constructor(private readonly m: EntityManager) {}

  async revoke(userId: string, notBefore: Date, expiresAt: Date): Promise<{ notBefore: Date; expiresAt: Date }> {
    const [row] = await this.m.query<Array<{ not_before: Date; expires_at: Date }>>(
      `INSERT INTO revoked_subjects AS s (user_id, not_before, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET not_before = greatest(s.not_before, $2), expires_at = greatest(s.expires_at, $3)
       RETURNING not_before, expires_at`,
      [userId, notBefore, expiresAt],
    );
    return { notBefore: row!.not_before, expiresAt: row!.expires_at };
  }

  async notBefore(...subjects: string[]): Promise<Date | null> {
    // Subjects are users and registry clients (UUIDs); a built-in client's id has no revocation.
    const ids = subjects.filter(isUuid);
    if (ids.length === 0) return null;
    const [row] = await this.m.query<Array<{ not_before: Date | null }>>(
      `SELECT max(not_before) AS not_before FROM revoked_subjects WHERE user_id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
      ids,
    );
    return row?.not_before ?? null;
  }

  async active(): Promise<Array<{ userId: string; notBefore: Date; expiresAt: Date }>> {
    const rows = await this.m.query<Array<{
      user_id: string;
      not_before: Date;
      expires_at: Date;
    }>>('SELECT user_id, not_before, expires_at FROM revoked_subjects WHERE expires_at > now()');
    return rows.map((r) => ({ userId: r.user_id, notBefore: r.not_before, expiresAt: r.expires_at }));
  }
}
