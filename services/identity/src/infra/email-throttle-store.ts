/** PostgreSQL store of the email actions' per-address throttle windows. */
import type { EntityManager } from 'typeorm';
import type { ThrottleStore } from '../domain/ports';

export class PgThrottle implements ThrottleStore {
  constructor(private readonly m: EntityManager) {}

  async hit(keyHash: Buffer, purpose: string, limit: number, windowSeconds: number): Promise<number> {
    const [row] = await this.m.query<Array<{ count: number; retry_after: number }>>(
      `INSERT INTO email_action_throttle AS t (key_hash, purpose, window_start, count) VALUES ($1, $2, now(), 1)
       ON CONFLICT (key_hash, purpose) DO UPDATE SET
         window_start = CASE WHEN t.window_start <= now() - make_interval(secs => $3) THEN now() ELSE t.window_start END,
         count = CASE WHEN t.window_start <= now() - make_interval(secs => $3) THEN 1 ELSE t.count + 1 END
       RETURNING count, ceil(extract(epoch FROM (t.window_start + make_interval(secs => $3) - now())))::int AS retry_after`,
      [keyHash, purpose, windowSeconds],
    );
    return row!.count > limit ? Math.max(1, row!.retry_after) : 0;
  }
}
