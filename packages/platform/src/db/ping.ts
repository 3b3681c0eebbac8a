import type { DataSource } from 'typeorm';
import { withTimeout } from '../health';

/** When each pool last got a client back without an error: the database answered then. */
const lastAnswers = new WeakMap<object, { at: number }>();

interface ReleasingPool {
  on(event: 'release', listener: (err: unknown) => void): unknown;
}

/** Whether the data source's pool got an answer from the database within the last `ms`. */
function answeredWithin(ds: DataSource, ms: number): boolean {
  const pool = (ds.driver as { master?: Partial<ReleasingPool> }).master;
  if (typeof pool?.on !== 'function') return false;
  let seen = lastAnswers.get(pool);
  if (!seen) {
    const fresh = { at: 0 };
    (pool as ReleasingPool).on('release', (err) => {
      if (!err) fresh.at = Date.now();
    });
    lastAnswers.set(pool, fresh);
    seen = fresh;
  }
  return Date.now() - seen.at < ms;
}

/**
 * Throws when the database does not answer in time (readiness). A database that answered one of
 * the pool's queries within the last `timeoutMs` is up: busy is not down. Under load the ping
 * itself would wait in the pool's queue behind the work, time out, and turn a busy service
 * unready (make soak: the directory went NOT_SERVING and logins answered 503).
 */
export async function pingDatabase(ds: DataSource, timeoutMs = 1_000): Promise<void> {
  if (answeredWithin(ds, timeoutMs)) return;
  await withTimeout(ds.query('SELECT 1'), timeoutMs, 'database ping');
}
