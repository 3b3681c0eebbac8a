import { type MigratedDatabase, describeSchemaContract, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';

describe('commerce schema', () => {
  let db: MigratedDatabase;
  const ds = () => db.ds;

  beforeAll(async () => {
    db = await migratedTestDatabase('commerce', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  describeSchemaContract(() => db, 'commerce', migrations.length);

  it('the stock constraints refuse a negative reservation and a reservation beyond on_hand', async () => {
    await ds().query(`INSERT INTO products (id, sku, name, price_minor, currency) VALUES (gen_random_uuid(), 'S-1', 'n', 100, 'EUR')`);
    await ds().query(`INSERT INTO stock (product_id, on_hand) SELECT id, 2 FROM products WHERE sku = 'S-1'`);
    await expect(ds().query(`UPDATE stock SET reserved = 3`)).rejects.toMatchObject({ driverError: expect.objectContaining({ constraint: 'ck_stock_on_hand' }) });
    await expect(ds().query(`UPDATE stock SET reserved = -1`)).rejects.toMatchObject({ driverError: expect.objectContaining({ constraint: 'ck_stock_reserved' }) });
    await expect(ds().query(`UPDATE products SET currency = 'eur'`)).rejects.toThrow();
  });
});
