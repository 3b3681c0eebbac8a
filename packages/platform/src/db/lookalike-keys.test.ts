/**
 * The lookalike-key migration step against the real PostgreSQL: every row gets its key, an
 * older live name keeps it and a younger live lookalike gets NULL (so the unique index can be
 * built), deleted rows keep theirs outside the index, and the index then refuses a lookalike.
 */
import type { DataSource } from 'typeorm';
import { type TestDatabase, createTestDatabase, testLogger } from '../testing';
import { lookalikeKey } from '../unicode';
import { UNIQUE_VIOLATION, createDataSource, pgConstraint, pgErrorCode } from './index';
import { addLookalikeKeyColumn } from './lookalike-keys';

describe('addLookalikeKeyColumn', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('lookalike_keys');
    ds = createDataSource({ url: db.url, name: 'lookalike_keys', entities: [], migrations: [], logger: testLogger() });
    await ds.initialize();
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('fills the column (older live name first), then the index refuses lookalikes among live rows', async () => {
    await ds.query(`CREATE TABLE names (id uuid PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL, deleted_at timestamptz)`);
    // Same second, microseconds apart: the keyset must not lose or repeat rows across batches.
    const rows: Array<[string, string, string, string | null]> = [
      ['00000000-0000-4000-8000-000000000001', 'Administrator', '2026-01-01 00:00:00.000001+00', null],
      ['00000000-0000-4000-8000-000000000002', '\ua4eedministrator', '2026-01-01 00:00:00.000002+00', null],
      ['00000000-0000-4000-8000-000000000003', 'Adrninistrator', '2026-01-01 00:00:00.000003+00', '2026-01-02 00:00:00+00'],
      ['00000000-0000-4000-8000-000000000004', 'Auditors', '2026-01-01 00:00:00.000004+00', null],
    ];
    for (const [id, name, createdAt, deletedAt] of rows) {
      await ds.query('INSERT INTO names (id, name, created_at, deleted_at) VALUES ($1, $2, $3, $4)', [id, name, createdAt, deletedAt]);
    }
    // Many more rows than one batch, none alike.
    await ds.query(`INSERT INTO names (id, name, created_at) SELECT gen_random_uuid(), 'name ' || i, '2026-01-03'::timestamptz + make_interval(secs => i) FROM generate_series(1, 12000) AS i`);

    const q = ds.createQueryRunner();
    await q.connect();
    try {
      await q.startTransaction();
      await addLookalikeKeyColumn(q, { table: 'names', source: 'name', column: 'name_key', index: 'uq_names_key_live', live: '"deleted_at" IS NULL' });
      await q.commitTransaction();
    } finally {
      await q.release();
    }

    const keys = await ds.query<Array<{ name: string; name_key: string | null }>>(`SELECT name, name_key FROM names WHERE name NOT LIKE 'name %' ORDER BY created_at`);
    expect(keys).toEqual([
      { name: 'Administrator', name_key: lookalikeKey('Administrator') },
      { name: '\ua4eedministrator', name_key: null },
      { name: 'Adrninistrator', name_key: lookalikeKey('Administrator') },
      { name: 'Auditors', name_key: 'auditors' },
    ]);
    const [{ missing }] = await ds.query<[{ missing: number }]>(`SELECT count(*)::int AS missing FROM names WHERE name_key IS NULL AND name LIKE 'name %'`);
    expect(missing).toBe(0);
    const [last] = await ds.query<Array<{ name_key: string }>>(`SELECT name_key FROM names WHERE name = 'name 12000'`);
    expect(last!.name_key).toBe(lookalikeKey('name 12000'));

    const err = await ds
      .query(`INSERT INTO names (id, name, created_at, name_key) VALUES (gen_random_uuid(), 'ADMINISTRATOR', now(), $1)`, [lookalikeKey('\u13aadministrator')])
      .catch((e: unknown) => e);
    expect([pgErrorCode(err), pgConstraint(err)]).toEqual([UNIQUE_VIOLATION, 'uq_names_key_live']);
  });
});
