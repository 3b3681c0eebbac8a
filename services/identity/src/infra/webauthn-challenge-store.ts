/** PostgreSQL store of WebAuthn ceremony challenges (single use; spent sign-in challenges kept until expiry). */
import type { EntityManager } from 'typeorm';
import type { WebauthnChallengeStore, WebauthnPurpose } from '../domain/ports';

export class PgWebauthnChallenges implements WebauthnChallengeStore {
  constructor(private readonly m: EntityManager) {}

  async create(c: { challengeHash: Buffer; purpose: WebauthnPurpose; userId: string | null; mfaChallengeId: string | null; expiresAt: Date }, opts: { keep?: number } = {}): Promise<void> {
    const values = [c.challengeHash, c.purpose, c.userId, c.mfaChallengeId, c.expiresAt];
    const insert = 'INSERT INTO webauthn_challenges (challenge_hash, purpose, user_id, mfa_challenge_id, expires_at) VALUES ($1, $2, $3, $4, $5)';
    if (opts.keep === undefined || c.userId === null) {
      await this.m.query(insert, values);
      return;
    }
    // The DELETE reads the table as it was before the statement (without the new row): the newest
    // keep - 1 of the others stay beside the new one.
    await this.m.query(
      `WITH added AS (${insert} RETURNING 1)
       DELETE FROM webauthn_challenges WHERE challenge_hash IN (
         SELECT challenge_hash FROM webauthn_challenges WHERE user_id = $3 AND purpose = $2 ORDER BY created_at DESC, challenge_hash OFFSET $6)`,
      [...values, Math.max(0, opts.keep - 1)],
    );
  }

  async take(challengeHash: Buffer, purpose: WebauthnPurpose): Promise<{ userId: string | null; mfaChallengeId: string | null } | null> {
    const rows = await this.m.query<[Array<{ user_id: string | null; mfa_challenge_id: string | null }>, number]>(
      'DELETE FROM webauthn_challenges WHERE challenge_hash = $1 AND purpose = $2 AND expires_at > now() RETURNING user_id, mfa_challenge_id',
      [challengeHash, purpose],
    );
    const r = rows[0]?.[0];
    return r ? { userId: r.user_id, mfaChallengeId: r.mfa_challenge_id } : null;
  }

  /**
   * A spent sign-in challenge is a row of purpose 'spent' (never taken; purged once expired). It is
   * kept 5 minutes past the challenge's expiry: that expiry was checked on a replica's clock, the
   * purge reads the database's, and a replica running behind must still find the row.
   */
  async spend(challengeHash: Buffer, expiresAt: Date): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      "INSERT INTO webauthn_challenges (challenge_hash, purpose, expires_at) VALUES ($1, 'spent', $2::timestamptz + interval '5 minutes') ON CONFLICT (challenge_hash) DO NOTHING RETURNING 1",
      [challengeHash, expiresAt],
    );
    return rows.length === 1;
  }
}
