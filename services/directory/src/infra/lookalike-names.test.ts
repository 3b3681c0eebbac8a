/**
 * Role and permission names that look alike cannot both be live (migration 1764600000100): the
 * stores write each name's lookalike key, the unique index among live rows refuses a second one
 * as CONFLICT naming the field, even from two transactions at once. Real PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { AppError, lookalikeKey } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';
import { pgStores } from './stores';

describe('directory stores: lookalike names', () => {
  let db: MigratedDatabase;
  const stores = () => pgStores(db.ds.manager);
  const conflictOf = (p: Promise<unknown>) => p.then(() => 'created', (e: unknown) => (e instanceof AppError ? { code: e.code, errors: e.errors } : e));
  const LOOKS_TAKEN = { code: 'CONFLICT', errors: [{ field: 'name', message: 'looks like a name already taken' }] };

  beforeAll(async () => {
    db = await migratedTestDatabase('directory_lookalikes', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  it('the seeded built-ins carry their keys', async () => {
    const rows = await db.ds.query<Array<{ name: string; name_skeleton: string }>>(
      `SELECT name, name_skeleton FROM roles UNION ALL SELECT name, name_skeleton FROM permissions ORDER BY name`,
    );
    // The Administrator role and the ten built-in permissions (organizations.manage and identity-providers.manage the newest).
    expect(rows.length).toBe(11);
    for (const r of rows) expect(r.name_skeleton).toBe(lookalikeKey(r.name));
  });

  it.each(['roles', 'permissions'] as const)('%s: a lookalike of a live name is a CONFLICT on name; the deleted name is free again', async (kind) => {
    const t = randomUUID().slice(0, 8);
    const store = () => stores()[kind];
    const first = randomUUID();
    await store().insert({ id: first, name: `ABC-${t}`, description: '' });
    // Cyrillic АВС, and small Cyrillic а and с around a Latin b.
    expect(await conflictOf(store().insert({ id: randomUUID(), name: `\u0410\u0412\u0421-${t}`, description: '' }))).toEqual(LOOKS_TAKEN);
    expect(await conflictOf(store().insert({ id: randomUUID(), name: `\u0430b\u0441-${t}`, description: '' }))).toEqual(LOOKS_TAKEN);
    // An exact duplicate (case aside) keeps its own message.
    expect(await conflictOf(store().insert({ id: randomUUID(), name: `abc-${t}`, description: '' }))).toEqual({ code: 'CONFLICT', errors: [{ field: 'name', message: 'is already taken' }] });
    expect(await store().softDelete(first)).toBe(true);
    await store().insert({ id: randomUUID(), name: `\u0410\u0412\u0421-${t}`, description: '' });
  });

  it('a rename to a lookalike of another live role is a CONFLICT, and writes nothing', async () => {
    const t = randomUUID().slice(0, 8);
    await stores().roles.insert({ id: randomUUID(), name: `Support ${t}`, description: '' });
    const other = randomUUID();
    await stores().roles.insert({ id: other, name: `Sales ${t}`, description: '' });
    expect(await conflictOf(stores().roles.update(other, { name: `Supp\u043ert ${t}` }))).toEqual(LOOKS_TAKEN);
    expect((await stores().roles.findById(other))!.name).toBe(`Sales ${t}`);
    await stores().roles.update(other, { name: `Sales team ${t}` });
    const [row] = await db.ds.query<Array<{ name_skeleton: string }>>('SELECT name_skeleton FROM roles WHERE id = $1', [other]);
    expect(row!.name_skeleton).toBe(lookalikeKey(`Sales team ${t}`));
  });

  it('two transactions creating lookalikes at once: one commits, the other is a CONFLICT', async () => {
    const t = randomUUID().slice(0, 8);
    const names = [`Billing ${t}`, `Bi\u04cfling ${t}`]; // Cyrillic palochka ӏ for l
    expect(lookalikeKey(names[0]!)).toBe(lookalikeKey(names[1]!));
    const outcomes = await Promise.all(
      names.map((name) => conflictOf(db.ds.transaction((m) => pgStores(m).roles.insert({ id: randomUUID(), name, description: '' })))),
    );
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'created')).toEqual([LOOKS_TAKEN]);
  });
});
