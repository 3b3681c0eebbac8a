/**
 * Least privilege on the real PostgreSQL: the migrate step (owner role) leaves the runtime role
 * able to append and to purge expired entries through audit_purge(), and nothing else: no UPDATE
 * or DELETE of entries (even with the retention flag set), no change of the retention setting
 * or of the chain's anchor.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { STREAMS, SUBJECTS, encodeEvent } from '@iam/contracts';
import { InMemoryEventBus, grantRuntimeRole, openDatabase, outboxUnitOfWork, quoteIdent } from '@iam/platform';
import { type TestDatabase, asSuperuser, createTestDatabase, testLogger, uniqueName, urlAsRole } from '@iam/platform/testing';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { auditQueries } from '../app/query';
import { createRecorder } from '../app/record';
import { purgeExpired } from '../app/retention';
import { checkpointSigner } from '../domain/checkpoint';
import { BusCheckpointLog } from './checkpoint-log';
import { afterMigrate } from './privileges';
import { entities, migrations } from './schema';
import { PgAuditLog, PgProjection } from './store';

const logger = testLogger();
const owner = uniqueName('iam_t_audit_owner').toLowerCase();
const runtime = uniqueName('iam_t_audit_rt').toLowerCase();
let db: TestDatabase;
let rt: DataSource;

const admin = asSuperuser;
const bus = new InMemoryEventBus({ logger });
const verify = (uow: Parameters<typeof auditQueries>[0]) =>
  auditQueries(uow, { checkpoints: new BusCheckpointLog(bus), key: checkpointSigner(randomBytes(32)), retentionDays: 30 }).verify();
const as = (role: string): string => urlAsRole(db.url, role);

beforeAll(async () => {
  await bus.declareStreams([STREAMS.auditCheckpoints]);
  db = await createTestDatabase('iam_audit_priv');
  await admin(`CREATE ROLE ${quoteIdent(owner)} LOGIN`);
  await admin(`CREATE ROLE ${quoteIdent(runtime)} LOGIN`);
  await admin(`ALTER DATABASE ${quoteIdent(db.name)} OWNER TO ${quoteIdent(owner)}`);
  const ds = await openDatabase({ url: as(owner), name: 'audit', entities, migrations, logger, migrate: true });
  await grantRuntimeRole(ds, runtime, logger);
  await afterMigrate(ds, { runtimeRole: runtime, env: { AUDIT_RETENTION_DAYS: '30' }, logger });
  await ds.destroy();
  rt = await openDatabase({ url: as(runtime), name: 'audit', entities, migrations, logger, migrate: false });
});

afterAll(async () => {
  await rt?.destroy();
  await db?.drop();
  await admin(`DROP ROLE IF EXISTS ${quoteIdent(runtime)}`);
  await admin(`DROP ROLE IF EXISTS ${quoteIdent(owner)}`);
});

it('the runtime role appends, cannot alter or delete entries, the setting or the anchor; it purges only what expired', async () => {
  const uow = outboxUnitOfWork(rt, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
  const record = createRecorder(uow);
  for (let i = 0; i < 4; i++) {
    const data = encodeEvent(SUBJECTS.tokenRevoked, { jti: randomUUID(), userId: randomUUID(), expiresAt: new Date() });
    await record({ id: randomUUID(), subject: SUBJECTS.tokenRevoked, data, occurredAt: new Date(), deliveryCount: 1 });
  }
  const denied = { driverError: { code: '42501' } };
  await expect(rt.query(`UPDATE audit_entries SET action = 'x'`)).rejects.toMatchObject(denied);
  await expect(rt.query('DELETE FROM audit_entries')).rejects.toMatchObject(denied);
  await expect(
    rt.transaction(async (m) => {
      await m.query("SET LOCAL audit.retention = 'on'");
      await m.query('DELETE FROM audit_entries');
    }),
  ).rejects.toMatchObject(denied);
  await expect(rt.query('TRUNCATE audit_entries')).rejects.toMatchObject(denied);
  await expect(rt.query('UPDATE audit_settings SET retention_days = 1')).rejects.toMatchObject(denied);
  await expect(rt.query(`UPDATE audit_chain SET anchor_hash = repeat('f', 64), first_seq = 3`)).rejects.toMatchObject(denied);
  expect(await rt.query('SELECT retention_days FROM audit_settings')).toEqual([{ retention_days: 30 }]);

  // Nothing has expired: the purge removes nothing. Two entries backdated 40 days (as a superuser): those two go.
  expect(await purgeExpired(uow, { batch: 100 })).toBe(0);
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only');
    await c.query(`UPDATE audit_entries SET recorded_at = recorded_at - interval '40 days' WHERE seq <= 2`);
    await c.query('ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only');
  } finally {
    await c.end();
  }
  expect(await purgeExpired(uow, { batch: 100 })).toBe(2);
  expect(await verify(uow)).toMatchObject({ ok: true, firstSeq: 3, checked: 2 });
});

it("no session SETs its way past the append-only trigger: the owner's SET LOCAL audit.retention and plain DELETE are refused; audit_purge() still purges", async () => {
  const uow = outboxUnitOfWork(rt, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
  const ownerSession = new Client({ connectionString: as(owner) });
  await ownerSession.connect();
  const count = async () => Number((await rt.query<Array<{ n: string }>>('SELECT count(*) AS n FROM audit_entries'))[0]!.n);
  const before = await count();
  try {
    // The rewrite of issue #20 as it was done: the chain head locked, the retention flag set, the tail deleted.
    await ownerSession.query('BEGIN');
    await ownerSession.query('SELECT last_seq, last_hash FROM audit_chain WHERE id = 1 FOR UPDATE');
    await ownerSession.query("SET LOCAL audit.retention = 'on'");
    await expect(ownerSession.query('DELETE FROM audit_entries WHERE seq >= 3')).rejects.toThrow(/append-only/);
    await ownerSession.query('ROLLBACK');
    await expect(ownerSession.query('DELETE FROM audit_entries WHERE seq >= 3')).rejects.toThrow(/append-only/);
    // The pass audit_purge() writes for itself is the owner's table: the runtime role can neither read nor write it.
    const denied = { driverError: { code: '42501' } };
    await expect(rt.query('INSERT INTO audit_purge_grants (txid) VALUES (txid_current())')).rejects.toMatchObject(denied);
    await expect(rt.query('SELECT * FROM audit_purge_grants')).rejects.toMatchObject(denied);
    expect(await count()).toBe(before);
  } finally {
    await ownerSession.end();
  }
  // Retention itself still works: entry 3 backdated (trigger off, as a superuser) goes through audit_purge().
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only');
    await c.query(`UPDATE audit_entries SET recorded_at = recorded_at - interval '40 days' WHERE seq = 3`);
    await c.query('ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only');
  } finally {
    await c.end();
  }
  expect(await purgeExpired(uow, { batch: 100 })).toBe(1);
  expect(await count()).toBe(before - 1);
  expect(await rt.query('SELECT 1 FROM audit_purge_grants').catch(() => 'denied')).toBe('denied');
  expect(await verify(uow)).toMatchObject({ ok: true, firstSeq: 4 });
});
