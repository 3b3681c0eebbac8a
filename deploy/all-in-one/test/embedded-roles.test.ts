/**
 * make run's least privilege on the real PostgreSQL (its embedded server is one, with password
 * auth): each database made for an owner role and a runtime role, a database an earlier make run
 * made as the superuser handed over to its owner, migrations run as the owner and the service
 * connected as its runtime role, which may do no DDL (and, for audit, delete no entry).
 */
import { randomBytes } from 'node:crypto';
import { auditEntities, auditMigrations, auditService, readAuditConfig } from '@iam/audit';
import { InMemoryEventBus, Lifecycle, createMetrics, openDatabase, quoteIdent, readConfig, startService } from '@iam/platform';
import { asSuperuser, createTestDatabase, testLogger, testPgUrl, uniqueName, urlAsRole, type TestDatabase } from '@iam/platform/testing';
import { prepareEmbeddedDatabase } from '../src/embedded-roles';
import type { EmbeddedDatabase } from '../src/embedded-urls';

const logger = testLogger();
const role = (tag: string) => ({ name: uniqueName(`iam_t_${tag}`).toLowerCase(), password: randomBytes(12).toString('base64url') });

describe('make run: owner and runtime roles on the embedded PostgreSQL', () => {
  const made: string[] = [];
  const dbs: TestDatabase[] = [];

  afterAll(async () => {
    for (const db of dbs) await db.drop();
    for (const r of made) await asSuperuser(`DROP ROLE IF EXISTS ${quoteIdent(r)}`);
  });

  const prepare = async (db: { name: string; url: string }): Promise<EmbeddedDatabase> => {
    const roles = { owner: role('owner'), runtime: role('rt') };
    made.push(roles.runtime.name, roles.owner.name);
    await prepareEmbeddedDatabase({ serverUrl: testPgUrl(), dbUrl: db.url, db: db.name, roles, logger });
    return roles;
  };

  /** The audit service as make run starts it: migrated as the owner, running as the runtime role. */
  async function runAudit(url: string, roles: EmbeddedDatabase) {
    const lifecycle = new Lifecycle(logger, 5_000);
    const rt = {
      logger,
      metrics: createMetrics({ defaultMetrics: false }),
      bus: new InMemoryEventBus({ logger }),
      lifecycle,
      bindHost: '127.0.0.1',
      callKey: randomBytes(32),
      migrateAs: { ownerUrl: urlAsRole(url, roles.owner.name), runtimeRole: roles.runtime.name, env: { AUDIT_RETENTION_DAYS: '30' } },
    };
    const env = { AUDIT_DATABASE_URL: urlAsRole(url, roles.runtime.name), AUDIT_GRPC_PORT: '0', AUDIT_CHECKPOINT_SIGNING_KEY: randomBytes(32).toString('base64') };
    const running = await startService(auditService(readConfig(env, (e) => readAuditConfig(e)), rt), rt);
    return { running, stop: () => lifecycle.shutdown('test done') };
  }

  it('an earlier make run’s database (made and migrated by the superuser) is handed to its owner; the service runs as its runtime role', async () => {
    const db = await createTestDatabase('aio_roles_old');
    dbs.push(db);
    // As make run did before: every object the superuser's, one migration still to come.
    const old = await openDatabase({ url: db.url, name: 'audit', entities: auditEntities, migrations: auditMigrations.slice(0, -1), logger, migrate: true });
    await old.destroy();
    const roles = await prepare(db);
    // Every later start prepares again: harmless.
    await prepareEmbeddedDatabase({ serverUrl: testPgUrl(), dbUrl: db.url, db: db.name, roles, logger });

    const { running, stop } = await runAudit(db.url, roles);
    try {
      const ds = running.dataSource;
      expect(await ds.query('SELECT current_user AS who')).toEqual([{ who: roles.runtime.name }]);
      // Every table and function of the schema is the owner's; the last migration ran as the owner.
      const foreign = await ds.query(
        `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S') AND pg_get_userbyid(c.relowner) <> $1
         UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> $1`,
        [roles.owner.name],
      );
      expect(foreign).toEqual([]);
      expect(await ds.query(`SELECT name FROM schema_migrations WHERE name = 'AuditPurgeGuard1764600000000'`)).toHaveLength(1);
      expect(await ds.query('SELECT retention_days FROM audit_settings')).toEqual([{ retention_days: 30 }]);
      // The runtime role: no DDL, no DELETE of entries.
      const denied = { driverError: { code: '42501' } };
      await expect(ds.query('CREATE TABLE t (x int)')).rejects.toMatchObject(denied);
      await expect(ds.query('DELETE FROM audit_entries')).rejects.toMatchObject(denied);
    } finally {
      await stop();
    }
  });

  it('a fresh data directory: the database is made for its owner and migrated by it; the service runs as its runtime role', async () => {
    const name = uniqueName('aio_roles_new').toLowerCase();
    const u = new URL(testPgUrl());
    u.pathname = `/${name}`;
    dbs.push({ name, url: u.toString(), drop: () => asSuperuser(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`) });
    const roles = await prepare({ name, url: u.toString() });
    const { running, stop } = await runAudit(u.toString(), roles);
    try {
      const [{ owner }] = await running.dataSource.query<[{ owner: string }]>('SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = current_database()');
      expect(owner).toBe(roles.owner.name);
      expect(await running.dataSource.query('SELECT current_user AS who, count(*)::int AS n FROM audit_entries')).toEqual([{ who: roles.runtime.name, n: 0 }]);
    } finally {
      await stop();
    }
  });
});
