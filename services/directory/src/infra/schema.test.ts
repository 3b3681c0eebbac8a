import { type MigratedDatabase, describeSchemaContract, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';

describe('directory schema', () => {
  let db: MigratedDatabase;
  const ds = () => db.ds;

  beforeAll(async () => {
    db = await migratedTestDatabase('directory', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  describeSchemaContract(() => db, 'directory', migrations.length);

  it('seeds the built-in permissions and the Administrator role holding them', async () => {
    const perms = await ds().query<Array<{ name: string }>>('SELECT name FROM permissions ORDER BY name');
    expect(perms.map((p) => p.name)).toEqual(['audit.read', 'clients.manage', 'identity-providers.manage', 'organizations.manage', 'permissions.manage', 'products.manage', 'role-permissions.manage', 'roles.manage', 'users.manage', 'webhooks.manage']);
    const linked = await ds().query<Array<{ name: string }>>(
      `SELECT p.name FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id
        WHERE r.name = 'Administrator' AND rp.revoked_at IS NULL ORDER BY p.name`,
    );
    expect(linked.map((p) => p.name)).toEqual(perms.map((p) => p.name));
  });
});
