import { type MigratedDatabase, describeSchemaContract, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';

describe('identity schema', () => {
  let db: MigratedDatabase;

  beforeAll(async () => {
    db = await migratedTestDatabase('identity', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  describeSchemaContract(() => db, 'identity', migrations.length);
});
