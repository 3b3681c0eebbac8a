/** PostgreSQL store of recovery codes: keyed digests with their scheme. */
import type { EntityManager } from 'typeorm';
import type { RecoveryCodeScheme, RecoveryCodeStore } from '../domain/ports';

export class PgRecoveryCodes implements RecoveryCodeStore {
  constructor(private readonly m: EntityManager) {}

  async replace(userId: string, digests: readonly Buffer[]): Promise<void> {
    await this.m.query('DELETE FROM mfa_recovery_codes WHERE user_id = $1', [userId]);
    await this.m.query("INSERT INTO mfa_recovery_codes (id, user_id, code_hash, scheme) SELECT gen_random_uuid(), $1, h, 'hmac' FROM unnest($2::bytea[]) AS h", [userId, digests]);
  }

  async use(userId: string, digests: Readonly<Record<RecoveryCodeScheme, Buffer>>): Promise<boolean> {
    // Each row is compared with the digest of its own scheme: a code is never checked under another's.
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE mfa_recovery_codes SET used_at = now()
        WHERE id = (SELECT id FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL
                      AND ((scheme = 'hmac' AND code_hash = $2) OR (scheme = 'hmac-legacy' AND code_hash = $3) OR (scheme = 'sha256' AND code_hash = $4))
                    LIMIT 1)
          AND used_at IS NULL`,
      [userId, digests.hmac, digests['hmac-legacy'], digests.sha256],
    );
    return n > 0;
  }

  async countLeft(userId: string): Promise<number> {
    const [r] = await this.m.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL', [userId]);
    return r?.n ?? 0;
  }

  async unused(userId: string): Promise<{ left: number; madeAt: Date } | null> {
    const [r] = await this.m.query<Array<{ n: number; made_at: Date | null }>>(
      'SELECT count(*)::int AS n, max(created_at) AS made_at FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
      [userId],
    );
    return r && r.n > 0 && r.made_at ? { left: r.n, madeAt: r.made_at } : null;
  }

  async removeAll(userId: string): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM mfa_recovery_codes WHERE user_id = $1', [userId]);
    return n;
  }

  async rekeyLegacy(limit: number, rekey: (digest: Buffer) => Buffer): Promise<number> {
    const rows = await this.m.query<Array<{ id: string; code_hash: Buffer }>>(
      "SELECT id, code_hash FROM mfa_recovery_codes WHERE scheme = 'sha256' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
      [limit],
    );
    if (rows.length === 0) return 0;
    // The scheme guard keeps a row from being keyed twice, whoever else runs this.
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE mfa_recovery_codes c SET code_hash = r.digest, scheme = 'hmac-legacy'
         FROM unnest($1::uuid[], $2::bytea[]) AS r(id, digest) WHERE c.id = r.id AND c.scheme = 'sha256'`,
      [rows.map((r) => r.id), rows.map((r) => rekey(r.code_hash))],
    );
    return n;
  }
}
