/**
 * Migrations as their own step (issue #13), on the real PostgreSQL: a migrating role applies them
 * and grants a runtime role DML only; the runtime (migrate: false) starts on the migrated schema
 * and cannot change it; on a schema that lacks a migration it refuses to start, naming the step.
 */
import { CreateOutbox1763800000000, OutboxEventRow } from '../outbox';
import { type TestDatabase, asSuperuser, createTestDatabase, testLogger, uniqueName, urlAsRole } from '../testing';
import { SchemaBehindError, grantRuntimeRole, openDatabase, pendingMigrations, quoteIdent } from './index';

const logger = testLogger();
const migrator = uniqueName('iam_t_migrator').toLowerCase();
const runtime = uniqueName('iam_t_runtime').toLowerCase();
let db: TestDatabase;

const admin = asSuperuser;
const as = (role: string): string => urlAsRole(db.url, role);
const options = (url: string, migrate: boolean) => ({ url, name: 'dbtest', entities: [OutboxEventRow], migrations: [CreateOutbox1763800000000], logger, migrate, timeoutMs: 5_000 });

beforeAll(async () => {
  db = await createTestDatabase('iam_migrations');
  await admin(`CREATE ROLE ${quoteIdent(migrator)} LOGIN`);
  await admin(`CREATE ROLE ${quoteIdent(runtime)} LOGIN`);
  await admin(`ALTER DATABASE ${quoteIdent(db.name)} OWNER TO ${quoteIdent(migrator)}`);
  await admin(`REVOKE ALL ON DATABASE ${quoteIdent(db.name)} FROM PUBLIC`);
});

afterAll(async () => {
  await db?.drop();
  await admin(`DROP ROLE IF EXISTS ${quoteIdent(runtime)}`);
  await admin(`DROP ROLE IF EXISTS ${quoteIdent(migrator)}`);
});

it('the runtime refuses a schema that lacks migrations, naming the migration step', async () => {
  await admin(`GRANT CONNECT ON DATABASE ${quoteIdent(db.name)} TO ${quoteIdent(runtime)}`);
  const err = await openDatabase(options(as(runtime), false)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SchemaBehindError);
  expect((err as SchemaBehindError).pending).toEqual(['CreateOutbox1763800000000']);
  expect((err as Error).message).toMatch(/schema is behind.*CreateOutbox1763800000000.*main\.js migrate/);
});

it('migrating role migrates and grants DML; the runtime role starts, writes, and cannot change the schema', async () => {
  const ds = await openDatabase(options(as(migrator), true));
  expect(await pendingMigrations(ds)).toEqual([]);
  await grantRuntimeRole(ds, runtime, logger);
  await ds.destroy();

  const rt = await openDatabase(options(as(runtime), false));
  try {
    await rt.query(`INSERT INTO outbox_events (id, subject, payload, occurred_at) VALUES (gen_random_uuid(), 'x', '\\x00', now())`);
    await rt.query(`UPDATE outbox_events SET attempts = 1`);
    await rt.query(`DELETE FROM outbox_events`);
    await expect(rt.query('CREATE TABLE sneaky (id int)')).rejects.toMatchObject({ driverError: { code: '42501' } });
    await expect(rt.query('ALTER TABLE outbox_events ADD COLUMN x int')).rejects.toMatchObject({ driverError: { code: '42501' } });
    await expect(rt.query('DROP TABLE outbox_events')).rejects.toMatchObject({ driverError: { code: '42501' } });
    await expect(rt.query(`CREATE DATABASE ${quoteIdent(`${db.name}_x`)}`)).rejects.toMatchObject({ driverError: { code: '42501' } });
  } finally {
    await rt.destroy();
  }
});
