import { type MigratedDatabase, describeSchemaContract, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';

describe('notification schema', () => {
  let db: MigratedDatabase;

  beforeAll(async () => {
    db = await migratedTestDatabase('notification', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  describeSchemaContract(() => db, 'notification', migrations.length);
});
