/** PostgreSQL store of revoked access tokens (their jti until they expire). */
import type { EntityManager } from 'typeorm';
import type { DenylistStore } from '../domain/ports';

export class PgDenylist implements DenylistStore {
  constructor(private readonly m: EntityManager) {}

  async add(jti: string, userId: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      'INSERT INTO revoked_access_tokens (jti, user_id, expires_at) VALUES ($1, $2, $3) ON CONFLICT (jti) DO NOTHING RETURNING jti',
      [jti, userId, expiresAt],
    );
    return rows.length > 0;
  }

  async has(jti: string): Promise<boolean> {
    const rows = await this.m.query<unknown[]>('SELECT 1 FROM revoked_access_tokens WHERE jti = $1', [jti]);
    return rows.length > 0;
  }

  async active(): Promise<Array<{ jti: string; expiresAt: Date }>> {
    const rows = await this.m.query<Array<{ jti: string; expires_at: Date }>>('SELECT jti, expires_at FROM revoked_access_tokens WHERE expires_at > now()');
    return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
  }
}
