import { createDataSource, migrate } from '@iam/platform';
import { createTestDatabase, testLogger, type TestDatabase } from '@iam/platform/testing';
import type { DataSource } from 'typeorm';
import { entities, migrations } from './schema';

describe('directory schema', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('dir_schema');
    ds = createDataSource({ url: db.url, name: 'directory', entities, migrations, logger: testLogger() });
    await ds.initialize();
    await migrate(ds, 'directory', testLogger());
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('a migrated empty database matches the entities (nothing for synchronize to do)', async () => {
    const log = await ds.driver.createSchemaBuilder().log();
    expect(log.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('seeds the five built-in permissions and the Administrator role holding them', async () => {
    const perms = await ds.query<Array<{ name: string }>>('SELECT name FROM permissions ORDER BY name');
    expect(perms.map((p) => p.name)).toEqual(['permissions.manage', 'products.manage', 'role-permissions.manage', 'roles.manage', 'users.manage']);
    const linked = await ds.query<Array<{ name: string }>>(
      `SELECT p.name FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id
        WHERE r.name = 'Administrator' AND rp.revoked_at IS NULL ORDER BY p.name`,
    );
    expect(linked.map((p) => p.name)).toHaveLength(5);
  });

  it('running the migrations again is a no-op', async () => {
    await migrate(ds, 'directory', testLogger());
    const [{ n }] = await ds.query<[{ n: number }]>('SELECT count(*)::int AS n FROM schema_migrations');
    expect(n).toBe(migrations.length);
  });
});
