/** PostgreSQL store of mfa tokens: the single-use challenge a right password gets when a factor is needed. */
import type { EntityManager } from 'typeorm';
import type { MfaChallengeRecord, MfaChallengeStore, MfaPurpose } from '../domain/ports';

export class PgMfaChallenges implements MfaChallengeStore {
  constructor(private readonly m: EntityManager) {}

  async create(c: MfaChallengeRecord & { tokenHash: Buffer; expiresAt: Date }): Promise<void> {
    await this.m.query('INSERT INTO mfa_challenges (id, user_id, email_hash, token_hash, purpose, expires_at, flow) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      c.id,
      c.userId,
      c.emailHash,
      c.tokenHash,
      c.purpose,
      c.expiresAt,
      c.flow === undefined ? null : JSON.stringify(c.flow),
    ]);
  }

  async find(tokenHash: Buffer): Promise<MfaChallengeRecord | null> {
    const [r] = await this.m.query<
      Array<{
        id: string;
        user_id: string;
        email_hash: Buffer;
        purpose: MfaPurpose;
        flow: unknown;
      }>
    >('SELECT id, user_id, email_hash, purpose, flow FROM mfa_challenges WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()', [tokenHash]);
    return r
      ? {
          id: r.id,
          userId: r.user_id,
          emailHash: r.email_hash,
          purpose: r.purpose,
          flow: r.flow,
        }
      : null;
  }

  async consume(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE mfa_challenges SET used_at = now() WHERE id = $1 AND used_at IS NULL AND expires_at > now()', [id]);
    return n > 0;
  }
}
