/** PostgreSQL store of email action tokens (password reset, email verification): single use. */
import type { EntityManager } from 'typeorm';
import type { EmailActionStore, EmailPurpose } from '../domain/ports';

export class PgEmailActions implements EmailActionStore {
  constructor(private readonly m: EntityManager) {}

  async issue(t: { id: string; userId: string; purpose: EmailPurpose; tokenHash: Buffer; emailHash: Buffer; expiresAt: Date }): Promise<void> {
    await this.m.query(
      `WITH invalidated AS (
         UPDATE email_action_tokens SET invalidated_at = now()
          WHERE user_id = $2 AND purpose = $3 AND used_at IS NULL AND invalidated_at IS NULL)
       INSERT INTO email_action_tokens (id, user_id, purpose, token_hash, email_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [t.id, t.userId, t.purpose, t.tokenHash, t.emailHash, t.expiresAt],
    );
  }

  async claim(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null> {
    const [row] = await this.m.query<[Array<{ id: string; user_id: string; email_hash: Buffer }>, number]>(
      `UPDATE email_action_tokens SET used_at = now()
        WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND invalidated_at IS NULL AND expires_at > now()
        RETURNING id, user_id, email_hash`,
      [tokenHash, purpose],
    );
    const r = Array.isArray(row) ? row[0] : undefined;
    return r ? { id: r.id, userId: r.user_id, emailHash: r.email_hash } : null;
  }

  async pending(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null> {
    const [r] = await this.m.query<Array<{ id: string; user_id: string; email_hash: Buffer }>>(
      `SELECT id, user_id, email_hash FROM email_action_tokens
        WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND invalidated_at IS NULL AND expires_at > now()`,
      [tokenHash, purpose],
    );
    return r ? { id: r.id, userId: r.user_id, emailHash: r.email_hash } : null;
  }

  async consume(id: string, userId: string): Promise<{ outcome: 'consumed'; emailHash: Buffer } | { outcome: 'already' | 'missing' }> {
    const [row] = await this.m.query<Array<{ used_at: Date | null; email_hash: Buffer }>>(
      'SELECT used_at, email_hash FROM email_action_tokens WHERE id = $1 AND user_id = $2 FOR UPDATE',
      [id, userId],
    );
    if (!row) return { outcome: 'missing' };
    if (row.used_at) return { outcome: 'already' };
    await this.m.query('UPDATE email_action_tokens SET used_at = now() WHERE id = $1', [id]);
    return { outcome: 'consumed', emailHash: row.email_hash };
  }

  async release(id: string): Promise<void> {
    await this.m.query('UPDATE email_action_tokens SET used_at = NULL WHERE id = $1', [id]);
  }

  async invalidateAllOf(userId: string, keep?: Buffer): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE email_action_tokens SET invalidated_at = now() WHERE user_id = $1 AND used_at IS NULL AND invalidated_at IS NULL AND ($2::bytea IS NULL OR email_hash <> $2::bytea)',
      [userId, keep ?? null],
    );
    return n;
  }
}
