import { type MigratedDatabase, describeSchemaContract, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';

describe('audit schema', () => {
  let db: MigratedDatabase;

  beforeAll(async () => {
    db = await migratedTestDatabase('audit', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  describeSchemaContract(() => db, 'audit', migrations.length);
});
