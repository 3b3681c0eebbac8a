/**
 * The shared schema check of every service (STYLE.md): its migrations, run on an empty test
 * database, give exactly what its entities describe, and running them again changes nothing.
 * Each service's `infra/schema.test.ts` calls it and adds checks of its own (seeds, constraints).
 */
import type { DataSource } from 'typeorm';
import { type DatabaseOptions, createDataSource, migrate } from '../db';
import { type TestDatabase, createTestDatabase, testLogger } from './index';

export interface MigratedDatabase {
  readonly ds: DataSource;
  close(): Promise<void>;
}

export async function migratedTestDatabase(
  name: string,
  schema: Pick<DatabaseOptions, 'entities' | 'migrations'>,
): Promise<MigratedDatabase> {
  const db: TestDatabase = await createTestDatabase(`${name}_schema`);
  const ds = createDataSource({ url: db.url, name, entities: schema.entities, migrations: schema.migrations, logger: testLogger() });
  await ds.initialize();
  await migrate(ds, name, testLogger());
  return {
    ds,
    close: async () => {
      await ds.destroy();
      await db.drop();
    },
  };
}

/** Registers the two checks every service's schema passes. */
export function describeSchemaContract(getDb: () => MigratedDatabase, name: string, migrationCount: number): void {
  it('a migrated empty database matches the entities (nothing for synchronize to do)', async () => {
    const log = await getDb().ds.driver.createSchemaBuilder().log();
    expect(log.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('running the migrations again is a no-op', async () => {
    await migrate(getDb().ds, name, testLogger());
    const [{ n }] = await getDb().ds.query<[{ n: number }]>('SELECT count(*)::int AS n FROM schema_migrations');
    expect(n).toBe(migrationCount);
  });
}
