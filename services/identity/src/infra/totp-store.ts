/** PostgreSQL store of TOTP secrets (sealed by the use case). */
import type { EntityManager } from 'typeorm';
import type { TotpStore } from '../domain/ports';

export class PgTotp implements TotpStore {
  constructor(private readonly m: EntityManager) {}

  async get(userId: string): Promise<{ sealedSecret: Buffer; active: boolean; activatedAt: Date | null; lastStep: number } | null> {
    const [r] = await this.m.query<Array<{ sealed_secret: Buffer; activated_at: Date | null; last_step: string }>>(
      'SELECT sealed_secret, activated_at, last_step FROM mfa_totp WHERE user_id = $1',
      [userId],
    );
    return r ? { sealedSecret: r.sealed_secret, active: r.activated_at !== null, activatedAt: r.activated_at, lastStep: Number(r.last_step) } : null;
  }

  async putPending(userId: string, sealedSecret: Buffer): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      `INSERT INTO mfa_totp AS t (user_id, sealed_secret) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET sealed_secret = $2, last_step = 0, created_at = now() WHERE t.activated_at IS NULL
       RETURNING user_id`,
      [userId, sealedSecret],
    );
    return rows.length > 0;
  }

  async putActive(userId: string, sealedSecret: Buffer): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      `INSERT INTO mfa_totp AS t (user_id, sealed_secret, activated_at) VALUES ($1, $2, now())
       ON CONFLICT (user_id) DO UPDATE SET sealed_secret = $2, last_step = 0, created_at = now(), activated_at = now() WHERE t.activated_at IS NULL
       RETURNING user_id`,
      [userId, sealedSecret],
    );
    return rows.length > 0;
  }

  async activate(userId: string, step: number): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE mfa_totp SET activated_at = now(), last_step = $2 WHERE user_id = $1 AND activated_at IS NULL AND last_step < $2', [
      userId,
      step,
    ]);
    return n > 0;
  }

  async useStep(userId: string, step: number): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE mfa_totp SET last_step = $2 WHERE user_id = $1 AND activated_at IS NOT NULL AND last_step < $2', [userId, step]);
    return n > 0;
  }

  async remove(userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM mfa_totp WHERE user_id = $1', [userId]);
    return n > 0;
  }
}
