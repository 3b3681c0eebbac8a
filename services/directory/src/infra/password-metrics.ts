/**
 * Metrics of the move to argon2id: how many live users still have a legacy hash (by family, or
 * `migration_hook` for users whose hash the legacy system has yet to give), counted at each
 * scrape over a partial index of exactly those users; and the rehashes and hook calls made.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DataSource } from 'typeorm';

/** The family prefix of a stored hash, as SQL (`$2b$`, `$pbkdf2-sha256$`, `{SSHA}`, `pbkdf2_sha256$`). */
const FAMILY = `COALESCE(substring(password_hash from '^(\\$[A-Za-z0-9-]+\\$|\\{[A-Z0-9]+\\}|[a-z0-9_]+\\$)'), 'none')`;

export function passwordMetrics(registry: Registry, ds: DataSource): (event: 'rehashed' | 'hook_valid' | 'hook_invalid' | 'hook_unavailable') => void {
  new Gauge({
    name: 'directory_legacy_password_hashes',
    help: 'Live users whose password hash is not yet the platform argon2id, by hash family (migration_hook: not yet asked of the legacy system).',
    labelNames: ['family'],
    registers: [registry],
    async collect() {
      const rows = await ds.query<Array<{ family: string; n: string }>>(
        `SELECT CASE WHEN password_migration = 'hook' THEN 'migration_hook' ELSE ${FAMILY} END AS family, count(*) AS n
           FROM users WHERE deleted_at IS NULL AND password_hash NOT LIKE '$argon2id$%' GROUP BY 1`,
      );
      this.reset();
      for (const r of rows) this.set({ family: r.family }, Number(r.n));
    },
  });
  const events = new Counter({
    name: 'directory_password_migrations_total',
    help: 'Legacy hashes rewritten to argon2id after a sign-in (rehashed), and migration-hook answers (hook_valid, hook_invalid, hook_unavailable).',
    labelNames: ['event'],
    registers: [registry],
  });
  return (event) => events.inc({ event });
}
