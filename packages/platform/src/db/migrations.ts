/**
 * Migrations under an advisory lock, and the check a process that does not migrate makes before
 * it starts: every migration it knows is applied.
 */
import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';

/** Runs pending migrations under a session advisory lock, each in its own transaction. */
export async function migrate(ds: DataSource, name: string, logger: Logger): Promise<void> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`${name}:migrations`]);
    const applied = await ds.runMigrations({ transaction: 'each' });
    if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  } finally {
    await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`${name}:migrations`]).catch(() => undefined);
    await runner.release();
  }
}

/** The schema lacks migrations this code needs: the service must not start on it. */
export class SchemaBehindError extends Error {
  constructor(
    readonly service: string,
    readonly pending: readonly string[],
  ) {
    super(
      `the ${service} database schema is behind this version: ${pending.length} migration(s) not applied (${pending.join(', ')}). ` +
        `Run the migration step first, with a role that may change the schema: "node services/${service}/dist/main.js migrate" ` +
        `(make migrate; in Kubernetes the chart's pre-install/pre-upgrade Job), or set MIGRATE_ON_START=true for development.`,
    );
    this.name = 'SchemaBehindError';
  }
}

/** Names of the migrations `ds` knows that its database has not applied (schema_migrations). */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  const known = ds.migrations.map((m) => m.name ?? m.constructor.name);
  const [{ table }] = await ds.query<[{ table: string | null }]>(`SELECT to_regclass('schema_migrations')::text AS "table"`);
  if (!table) return known;
  const rows = await ds.query<Array<{ name: string }>>('SELECT name FROM schema_migrations');
  const applied = new Set(rows.map((r) => r.name));
  return known.filter((n) => !applied.has(n));
}

/**
 * Throws SchemaBehindError when a migration this code knows is not applied. Migrations the code
 * does not know (a newer version's, during a rolling upgrade) are fine: expand/contract keeps
 * the previous version working on the expanded schema.
 */
export async function verifySchema(ds: DataSource, service: string, logger: Logger): Promise<void> {
  const pending = await pendingMigrations(ds);
  if (pending.length > 0) throw new SchemaBehindError(service, pending);
  logger.debug({ migrations: ds.migrations.length }, 'database schema is up to date');
}
