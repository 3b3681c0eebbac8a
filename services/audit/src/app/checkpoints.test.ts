/**
 * Signed checkpoints on the real PostgreSQL, with the audit database's own roles (an owner that
 * migrated it; the runtime role the service runs as), on the real NATS JetStream and on the
 * in-process bus: the head signed every N entries and on the interval, published to its stream
 * and logged; then the rewrites of issue #20 by the database's owner (the tail cut and the head
 * moved back; one entry rewritten and the chain after it recomputed; a prefix removed as if by
 * retention), each named by verify and never signed over.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { STREAMS, SUBJECTS, eventsV1, decodeEvent, encodeEvent } from '@iam/contracts';
import { type EventBus, InMemoryEventBus, JetStreamEventBus, grantRuntimeRole, openDatabase, outboxUnitOfWork, quoteIdent } from '@iam/platform';
import { asSuperuser, createTestDatabase, deleteNamespaceStreams, eventually, testNatsUrl, uniqueName, urlAsRole, type TestDatabase } from '@iam/platform/testing';
import { Client } from 'pg';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { entryHash } from '../domain/chain';
import { type Checkpoint, checkpointJson, checkpointKey, checkpointSigner } from '../domain/checkpoint';
import type { AuditEntry } from '../domain/entry';
import type { AuditUnitOfWork } from '../domain/ports';
import { BusCheckpointLog } from '../infra/checkpoint-log';
import { afterMigrate } from '../infra/privileges';
import { entities, migrations } from '../infra/schema';
import { PgAuditLog, PgProjection } from '../infra/store';
import { type Checkpointer, createCheckpointer } from './checkpoints';
import { auditQueries } from './query';
import { createRecorder } from './record';

const natsUrl = testNatsUrl();
const buses: Array<[string, (() => EventBus) | undefined]> = [
  ['in-process bus', () => new InMemoryEventBus({ logger: pino({ level: 'silent' }) })],
  ['NATS JetStream', natsUrl ? () => new JetStreamEventBus({ url: natsUrl, name: 'audit-checkpoints-test', namespace: uniqueName('t'), logger: pino({ level: 'silent' }) }) : undefined],
];

describe.each(buses)('audit checkpoints on the %s', (_kind, makeBus) => {
  if (!makeBus) {
    it.skip('needs a NATS server', () => undefined);
    return;
  }
  const owner = uniqueName('iam_t_audit_owner').toLowerCase();
  const runtime = uniqueName('iam_t_audit_rt').toLowerCase();
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  const signer = checkpointSigner(randomBytes(32));
  let db: TestDatabase;
  let rt: DataSource;
  let bus: EventBus;
  let uow: AuditUnitOfWork;
  let checkpointer: Checkpointer;
  let record: (subject: typeof SUBJECTS.userUpdated, roles: string[]) => Promise<void>;

  const verify = () => auditQueries(uow, { checkpoints: new BusCheckpointLog(bus), key: signer, retentionDays: 365 }).verify();
  const stream = async (): Promise<Checkpoint[]> => new BusCheckpointLog(bus).read(1_000);
  const entry = async (seq: number): Promise<AuditEntry> => (await new PgAuditLog(rt.manager).entriesAfter(seq - 1, 1))[0]!;
  const session = async (role: string): Promise<Client> => {
    const c = new Client({ connectionString: role === 'superuser' ? db.url : urlAsRole(db.url, role) });
    await c.connect();
    return c;
  };
  const as = async <T>(role: string, fn: (c: Client) => Promise<T>): Promise<T> => {
    const c = await session(role);
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };

  /** The whole trail and its head, to put back after each tampering (triggers off, as a superuser). */
  async function tampered(scenario: () => Promise<void>, check: () => Promise<void>): Promise<void> {
    const saved = await as('superuser', async (c) => ({
      rows: (await c.query<Record<string, unknown>>('SELECT * FROM audit_entries ORDER BY seq')).rows,
      chain: (await c.query<Record<string, unknown>>('SELECT * FROM audit_chain')).rows[0]!,
    }));
    await scenario();
    try {
      await check();
    } finally {
      await as('superuser', async (c) => {
        await c.query('BEGIN');
        await c.query("SET LOCAL session_replication_role = 'replica'");
        await c.query('DELETE FROM audit_entries');
        for (const r of saved.rows) {
          const cols = Object.keys(r);
          const values = cols.map((k) => (k === 'changes' ? JSON.stringify(r[k]) : r[k]));
          await c.query(`INSERT INTO audit_entries (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, values);
        }
        const h = saved.chain;
        await c.query('UPDATE audit_chain SET last_seq = $1, last_hash = $2, first_seq = $3, anchor_hash = $4', [h.last_seq, h.last_hash, h.first_seq, h.anchor_hash]);
        await c.query('COMMIT');
      });
    }
    expect(await verify()).toMatchObject({ ok: true });
  }

  beforeAll(async () => {
    db = await createTestDatabase('iam_audit_cp');
    await asSuperuser(`CREATE ROLE ${quoteIdent(owner)} LOGIN`);
    await asSuperuser(`CREATE ROLE ${quoteIdent(runtime)} LOGIN`);
    await asSuperuser(`ALTER DATABASE ${quoteIdent(db.name)} OWNER TO ${quoteIdent(owner)}`);
    const ds = await openDatabase({ url: urlAsRole(db.url, owner), name: 'audit', entities, migrations, logger, migrate: true });
    await grantRuntimeRole(ds, runtime, logger);
    await afterMigrate(ds, { runtimeRole: runtime, env: {}, logger });
    await ds.destroy();
    rt = await openDatabase({ url: urlAsRole(db.url, runtime), name: 'audit', entities, migrations, logger, migrate: false });
    bus = makeBus();
    await bus.declareStreams([STREAMS.auditCheckpoints]);
    uow = outboxUnitOfWork(rt, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
    checkpointer = createCheckpointer({ uow, log: new BusCheckpointLog(bus), signer, logger }, { every: 4, intervalMs: 3_600_000 });
    // Its first try (at start: nothing to sign yet) is over before the first entry.
    expect(await checkpointer.checkpoint()).toBeUndefined();
    const recorder = createRecorder(uow);
    const user = randomUUID();
    record = async (subject, roles) => {
      const data = encodeEvent(subject, eventsV1.UserChanged.create({ userId: user, email: 'bob@example.com', firstName: 'Bob', lastName: 'B', roles, changedFields: ['roles'] }));
      await recorder({ id: randomUUID(), subject, data, occurredAt: new Date(), deliveryCount: 1 });
      checkpointer.appended();
    };
  });

  afterAll(async () => {
    await checkpointer?.stop();
    await bus?.close();
    if (natsUrl && bus instanceof JetStreamEventBus) await deleteNamespaceStreams(natsUrl, bus.namespace);
    await rt?.destroy();
    await db?.drop();
    await asSuperuser(`DROP ROLE IF EXISTS ${quoteIdent(runtime)}`);
    await asSuperuser(`DROP ROLE IF EXISTS ${quoteIdent(owner)}`);
  });

  it('every N entries the head is signed, published to AUDIT_CHECKPOINTS and logged; the interval signs a head that moved', async () => {
    for (let i = 0; i < 4; i++) await record(SUBJECTS.userUpdated, ['Support']);
    await eventually(async () => (await stream()).some((c) => c.seq === 4));
    for (let i = 0; i < 4; i++) await record(SUBJECTS.userUpdated, ['Support']);
    await eventually(async () => (await stream()).some((c) => c.seq === 8));
    await record(SUBJECTS.userUpdated, ['Support']);
    await new Promise((r) => setTimeout(r, 100));
    expect((await stream()).map((c) => c.seq)).toEqual([4, 8]);
    expect(await verify()).toMatchObject({ ok: true, checked: 9, checkpoint: { seq: 8 }, checkpointsChecked: 2, unsignedEntries: 1 });

    // What the stream holds, read raw: the subject, the payload, a signature the public key alone verifies.
    const raw = await bus.read(STREAMS.auditCheckpoints);
    expect(raw.map((e) => e.subject)).toEqual([SUBJECTS.auditCheckpointSigned, SUBJECTS.auditCheckpointSigned]);
    const published = checkpointKey(signer.publicKey);
    for (const e of raw) {
      const m = decodeEvent(SUBJECTS.auditCheckpointSigned, e.data);
      const c = { seq: m.seq, hash: m.hash, signedAt: m.signedAt!, keyId: m.keyId, signature: Buffer.from(m.signature).toString('base64') };
      expect(published.verifies(c)).toBe(true);
      expect(c.hash).toBe((await entry(c.seq)).hash);
      // The same checkpoint as a log line.
      expect(lines.some((l) => l.includes('audit checkpoint signed') && l.includes(JSON.stringify(checkpointJson(c))))).toBe(true);
    }

    // The interval: another process signing every 200 ms only when the head moved.
    const timed = createCheckpointer({ uow, log: new BusCheckpointLog(bus), signer, logger }, { every: 1_000, intervalMs: 200 });
    try {
      await eventually(async () => (await stream()).some((c) => c.seq === 9), 5_000, 50);
      await new Promise((r) => setTimeout(r, 500));
      expect((await stream()).map((c) => c.seq)).toEqual([4, 8, 9]);
    } finally {
      await timed.stop();
    }
    expect(await verify()).toMatchObject({ ok: true, checkpoint: { seq: 9 }, unsignedEntries: 0, keyId: signer.keyId, publicKey: signer.publicKey });
  });

  it('a checkpoint signed by another key, or forged under this key id, is left out (counted as rejected)', async () => {
    const other = checkpointSigner(randomBytes(32)).sign({ seq: 999, hash: 'f'.repeat(64) }, new Date());
    const forged = { ...signer.sign({ seq: 998, hash: 'e'.repeat(64) }, new Date()), seq: 997 };
    for (const c of [other, forged]) await new BusCheckpointLog(bus).publish(c);
    expect(await verify()).toMatchObject({ ok: true, checkpoint: { seq: 9 }, checkpointsRejected: 2 });
  });

  it("the owner's rewrite of #20: the SET trick and a plain DELETE are refused; the tail cut through the owner's own levers is named by verify and never signed over", async () => {
    // Signed now (or already, by the 4th entry since the last): checkpoints at 11, 12 (the grant) and 15.
    const signedUpTo = async (seq: number) => {
      await checkpointer.checkpoint();
      expect((await stream()).map((c) => c.seq)).toContain(seq);
    };
    for (let i = 0; i < 2; i++) await record(SUBJECTS.userUpdated, ['Support']);
    await signedUpTo(11);
    await record(SUBJECTS.userUpdated, ['Administrator', 'Support']); // seq 12: the grant
    await signedUpTo(12);
    for (let i = 0; i < 3; i++) await record(SUBJECTS.userUpdated, ['Administrator']);
    await signedUpTo(15);
    const grant = await entry(12);
    expect(grant.changes).toEqual([{ field: 'roles', before: ['Support'], after: ['Administrator', 'Support'] }]);
    const hash11 = (await entry(11)).hash;
    const cut = 'UPDATE audit_chain SET last_seq = 11, last_hash = $1 WHERE id = 1';

    await as(owner, async (c) => {
      await c.query('BEGIN');
      await c.query('SELECT last_seq, last_hash FROM audit_chain WHERE id = 1 FOR UPDATE');
      await c.query("SET LOCAL audit.retention = 'on'");
      await expect(c.query('DELETE FROM audit_entries WHERE seq >= 12')).rejects.toThrow(/append-only/);
      await c.query('ROLLBACK');
      await expect(c.query('DELETE FROM audit_entries WHERE seq >= 12')).rejects.toThrow(/append-only/);
    });
    const named = async () => {
      const report = await verify();
      expect(report).toMatchObject({ ok: false, brokenAtSeq: 12, checkpoint: { seq: 15 } });
      expect(report.reason).toMatch(/^entries after seq 11 are missing: the checkpoint at seq 15 signed at \d{4}-\d\d-\d\dT[\d:.]+Z is past the chain's end$/);
      expect(await new PgAuditLog(rt.manager).entriesAfter(11, 10)).toEqual([]); // the grant is gone
      expect(await checkpointer.checkpoint()).toBeUndefined();
      expect(lines.some((l) => l.includes('no longer extends its last signed checkpoint'))).toBe(true);
    };
    // What the owner can still do: write retention's pass for its own transaction (it owns that table) ...
    await tampered(
      () =>
        as(owner, async (c) => {
          await c.query('BEGIN');
          await c.query('SELECT last_seq, last_hash FROM audit_chain WHERE id = 1 FOR UPDATE');
          await c.query('INSERT INTO audit_purge_grants (txid) VALUES (txid_current())');
          await c.query('DELETE FROM audit_entries WHERE seq >= 12');
          await c.query(cut, [hash11]);
          await c.query('COMMIT');
        }),
      named,
    );
    // ... or turn its table's trigger off.
    await tampered(
      () =>
        as(owner, async (c) => {
          await c.query('BEGIN');
          await c.query('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only');
          await c.query('DELETE FROM audit_entries WHERE seq >= 12');
          await c.query(cut, [hash11]);
          await c.query('ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only');
          await c.query('COMMIT');
        }),
      named,
    );
  });

  /** The owner rewrites entry `seq` and recomputes every hash after it and the head, so the chain's own links hold. */
  const rewrite = (seq: number) =>
    as(owner, async (c) => {
      const after = await new PgAuditLog(rt.manager).entriesAfter(seq - 1, 1_000);
      await c.query('BEGIN');
      await c.query('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only');
      let prev = after[0]!.prevHash;
      for (const e of after) {
        const changes = e.seq === seq ? [{ field: 'roles', before: ['Support'], after: ['Support'] }] : e.changes;
        const hash = entryHash({ ...e, changes, prevHash: prev });
        await c.query('UPDATE audit_entries SET changes = $1::jsonb, prev_hash = $2, hash = $3 WHERE seq = $4', [JSON.stringify(changes), prev, hash, e.seq]);
        prev = hash;
      }
      await c.query('UPDATE audit_chain SET last_hash = $1 WHERE id = 1', [prev]);
      await c.query('ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only');
      await c.query('COMMIT');
    });

  it('one entry rewritten, the chain after it recomputed and the head moved: verify names the entry (or the span between two checkpoints)', async () => {
    // Checkpoints at 11, 12 (the grant) and 15: the grant rewritten is named exactly, entry 13 by its span.
    await tampered(
      () => rewrite(12),
      async () => {
        const report = await verify();
        expect(report).toMatchObject({ ok: false, brokenAtSeq: 12 });
        expect(report.reason).toMatch(/^entry 12 differs from the checkpoint at seq 12 signed at \S+: it was rewritten$/);
        expect(await checkpointer.checkpoint()).toBeUndefined();
      },
    );
    await tampered(
      () => rewrite(13),
      async () => {
        const report = await verify();
        expect(report).toMatchObject({ ok: false, brokenAtSeq: 13 });
        expect(report.reason).toMatch(/^an entry in 13\.\.15 was rewritten and the chain after it recomputed: entry 15 differs from the checkpoint at seq 15 signed at \S+ \(the checkpoint at seq 12 still matches\)$/);
      },
    );
  });

  it('a prefix removed as if by retention, though younger than the retention: verify names it', async () => {
    await tampered(
      () =>
        as(owner, async (c) => {
          const hash7 = (await c.query<{ hash: string }>('SELECT hash FROM audit_entries WHERE seq = 7')).rows[0]!.hash;
          await c.query('BEGIN');
          await c.query('INSERT INTO audit_purge_grants (txid) VALUES (txid_current())');
          await c.query('DELETE FROM audit_entries WHERE seq <= 7');
          await c.query('UPDATE audit_chain SET first_seq = 8, anchor_hash = $1 WHERE id = 1', [hash7]);
          await c.query('COMMIT');
        }),
      async () => {
        const report = await verify();
        expect(report).toMatchObject({ ok: false, brokenAtSeq: 5, firstSeq: 8 });
        expect(report.reason).toMatch(/^entries 5\.\.7 were removed before their retention of 365 days: the checkpoint at seq 4 signed at \S+ shows they were recorded after it$/);
      },
    );
  });
});
