import { createDataSource, migrate } from '@iam/platform';
import { createTestDatabase, testLogger, type TestDatabase } from '@iam/platform/testing';
import type { DataSource } from 'typeorm';
import { entities, migrations } from './schema';

describe('commerce schema', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('commerce_schema');
    ds = createDataSource({ url: db.url, name: 'commerce', entities, migrations, logger: testLogger() });
    await ds.initialize();
    await migrate(ds, 'commerce', testLogger());
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('a migrated empty database matches the entities (nothing for synchronize to do)', async () => {
    const log = await ds.driver.createSchemaBuilder().log();
    expect(log.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('the stock constraints refuse a negative reservation and a reservation beyond on_hand', async () => {
    await ds.query(`INSERT INTO products (id, sku, name, price_minor, currency) VALUES (gen_random_uuid(), 'S-1', 'n', 100, 'EUR')`);
    await ds.query(`INSERT INTO stock (product_id, on_hand) SELECT id, 2 FROM products WHERE sku = 'S-1'`);
    await expect(ds.query(`UPDATE stock SET reserved = 3`)).rejects.toMatchObject({ driverError: expect.objectContaining({ constraint: 'ck_stock_on_hand' }) });
    await expect(ds.query(`UPDATE stock SET reserved = -1`)).rejects.toMatchObject({ driverError: expect.objectContaining({ constraint: 'ck_stock_reserved' }) });
    await expect(ds.query(`UPDATE products SET currency = 'eur'`)).rejects.toThrow();
  });

  it('running the migrations again is a no-op', async () => {
    await migrate(ds, 'commerce', testLogger());
    const [{ n }] = await ds.query<[{ n: number }]>('SELECT count(*)::int AS n FROM schema_migrations');
    expect(n).toBe(migrations.length);
  });
});
