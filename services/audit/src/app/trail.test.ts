/**
 * The trail on the real PostgreSQL: events in (the recorder, as the consumers call it), entries
 * out (queries, verification, retention). The consumers themselves run on the real NATS in
 * deploy/all-in-one/test/audit.e2e.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type EventSubject, STREAMS, SUBJECTS, encodeEvent } from '@iam/contracts';
import { outboxUnitOfWork } from '@iam/platform';
import { InMemoryEventBus, type IncomingEvent } from '@iam/platform/bus';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { checkpointSigner } from '../domain/checkpoint';
import type { AuditUnitOfWork } from '../domain/ports';
import { BusCheckpointLog } from '../infra/checkpoint-log';
import { entities, migrations } from '../infra/schema';
import { PgAuditLog, PgProjection } from '../infra/store';
import { auditQueries, encodeCursor } from './query';
import { createRecorder } from './record';
import { purgeExpired } from './retention';
import { decodeEvent } from '@iam/contracts';

const decodeUserId = (e: IncomingEvent): string => decodeEvent(SUBJECTS.userCreated, e.data).userId;

describe('audit trail (PostgreSQL)', () => {
  let db: MigratedDatabase;
  let uow: AuditUnitOfWork;
  let record: (e: IncomingEvent) => Promise<void>;
  // No checkpoint is ever signed here: the chain's own links are what these tests are about (checkpoints.test.ts has the rest).
  const bus = new InMemoryEventBus({ logger: testLogger() });
  const q = () => auditQueries(uow, { checkpoints: new BusCheckpointLog(bus), key: checkpointSigner(randomBytes(32)), retentionDays: 365 });

  const admin = randomUUID();
  const bob = randomUUID();

  function event<S extends EventSubject>(subject: S, payload: Parameters<typeof encodeEvent<S>>[1], headers: Record<string, string> = {}, id = randomUUID()): IncomingEvent {
    return { id, subject, data: encodeEvent(subject, payload), occurredAt: new Date(), deliveryCount: 1, headers, traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` };
  }
  const user = (userId: string, email: string, roles: string[], extra: Partial<{ changedFields: string[]; passwordResetId: string }> = {}) => ({
    userId,
    email,
    firstName: 'F',
    lastName: 'L',
    roles,
    changedFields: extra.changedFields ?? [],
    passwordResetId: extra.passwordResetId,
    emailVerified: false,
    // Without `before`, as events were before they carried it: the projection says what was.
    before: undefined,
  });
  const byAdmin = { 'Iam-Actor-Sub': admin, 'Iam-Client-Ip': '203.0.113.7', 'Iam-User-Agent': 'curl/8' };

  beforeAll(async () => {
    db = await migratedTestDatabase('audit_trail', { entities, migrations });
    await bus.declareStreams([STREAMS.auditCheckpoints]);
    uow = outboxUnitOfWork(db.ds, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
    record = createRecorder(uow);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('a grant of Administrator: actor (id and email), target, before/after roles, IP, user agent, trace id; no secret anywhere', async () => {
    await record(event(SUBJECTS.userCreated, user(admin, 'root@example.com', ['Administrator'])));
    await record(event(SUBJECTS.userCreated, user(bob, 'bob@example.com', ['Support']), byAdmin));
    await record(event(SUBJECTS.userUpdated, user(bob, 'bob@example.com', ['Administrator', 'Support'], { changedFields: ['roles', 'password'] }), byAdmin));
    const [grant] = (await q().list({ pageSize: 1, targetId: bob, action: 'user.roles.' })).items;
    expect(grant).toMatchObject({
      action: 'user.roles.changed',
      actor: { type: 'user', id: admin, email: 'root@example.com' },
      target: { type: 'user', id: bob },
      changes: [
        { field: 'roles', before: ['Support'], after: ['Administrator', 'Support'] },
        { field: 'password', redacted: true },
      ],
      clientIp: '203.0.113.7',
      userAgent: 'curl/8',
      traceId: 'ab'.repeat(16),
    });
    expect(grant!.changes.find((c) => c.field === 'password')).toEqual({ field: 'password', redacted: true });
  });

  it('reset request and completion, revocations, an order: actions and targets; the sealed token never recorded', async () => {
    const sealed = 'SEALED-TOKEN-VALUE';
    await record(event(SUBJECTS.passwordResetRequested, { userId: bob, email: 'bob@example.com', firstName: 'Bob', sealedToken: sealed, expiresAt: new Date() }, { 'Iam-Client-Ip': '198.51.100.4' }));
    await record(event(SUBJECTS.userUpdated, user(bob, 'bob@example.com', ['Administrator', 'Support'], { changedFields: ['password'], passwordResetId: randomUUID() })));
    await record(event(SUBJECTS.subjectRevoked, { userId: bob, notBefore: new Date(), expiresAt: new Date() }));
    const orderId = randomUUID();
    await record(
      event(SUBJECTS.orderPlaced, {
        orderId,
        customerId: bob,
        customerEmail: '',
        lines: [{ productId: randomUUID(), sku: 'MUG', name: 'Mug', quantity: 2, unitPriceMinor: 1250 }],
        totalMinor: 2500,
        currency: 'EUR',
        placedAt: new Date(),
      }),
    );
    const items = (await q().list({ pageSize: 10, targetId: bob })).items.map((e) => [e.action, e.actor.type]);
    expect(items.slice(0, 3)).toEqual([
      ['sessions.revoked', 'system'],
      ['password.reset.completed', 'system'],
      ['password.reset.requested', 'anonymous'],
    ]);
    const [order] = (await q().list({ pageSize: 1, targetId: orderId })).items;
    expect(order).toMatchObject({ action: 'order.placed', actor: { type: 'user', id: bob, email: 'bob@example.com' } });
    const all = JSON.stringify((await q().list({ pageSize: 100 })).items);
    expect(all).not.toContain(sealed);
  });

  it('a redelivered event is recorded once; role and link events carry names before and after', async () => {
    const role = randomUUID();
    const created = event(SUBJECTS.roleCreated, { roleId: role, name: 'Support-2', description: '', changedFields: [], before: undefined }, byAdmin);
    await record(created);
    await record({ ...created, deliveryCount: 2 });
    await record(event(SUBJECTS.roleUpdated, { roleId: role, name: 'Helpdesk', description: '', changedFields: ['name'], before: undefined }, byAdmin));
    await record(
      event(SUBJECTS.rolePermissionCreated, { linkId: randomUUID(), roleId: role, permissionId: randomUUID(), roleName: 'Helpdesk', permissionName: 'users.manage', before: undefined }, byAdmin),
    );
    const items = (await q().list({ pageSize: 10, targetId: role })).items;
    expect(items.map((e) => e.action)).toEqual(['role.permission.granted', 'role.updated', 'role.created']);
    expect(items[1]!.changes).toEqual([{ field: 'name', before: 'Support-2', after: 'Helpdesk' }]);
    expect(items[0]!.changes[0]).toMatchObject({ field: 'permission', after: { name: 'users.manage' } });
  });

  it('filters (actor, target, action prefix, time) and keyset pages, newest first; bad filters and cursors are refused', async () => {
    const all = (await q().list({ pageSize: 100 })).items;
    const seqs = all.map((e) => e.seq);
    const newestFirst = (a: { occurredAt: Date; seq: number }, b: { occurredAt: Date; seq: number }) => b.occurredAt.getTime() - a.occurredAt.getTime() || b.seq - a.seq;
    expect(all.map((e) => e.seq)).toEqual([...all].sort(newestFirst).map((e) => e.seq));
    const pages: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await q().list({ pageSize: 3, cursor });
      pages.push(...page.items.map((e) => e.seq));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages).toEqual(seqs);
    const byActor = (await q().list({ pageSize: 100, actorId: admin })).items;
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((e) => e.actor.id === admin)).toBe(true);
    expect((await q().list({ pageSize: 100, action: 'role.' })).items.every((e) => e.action.startsWith('role.'))).toBe(true);
    // LIKE wildcards in the prefix match literally.
    expect((await q().list({ pageSize: 100, action: '%' })).items).toEqual([]);
    expect((await q().list({ pageSize: 100, from: new Date(Date.now() + 60_000) })).items).toEqual([]);
    await expect(q().list({ pageSize: 0 })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(q().list({ pageSize: 10, cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(q().list({ pageSize: 10, cursor: Buffer.from('x.5').toString('base64url') })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(q().list({ pageSize: 10, from: new Date(2), to: new Date(1) })).rejects.toMatchObject({ code: 'VALIDATION' });
    expect((await q().list({ pageSize: 10, cursor: encodeCursor({ occurredUs: '0', seq: 1 }) })).items).toEqual([]);
  });

  it('newest first by when it happened: a late-recorded event takes its time position; windows and cursors over equal instants', async () => {
    const target = randomUUID();
    const at = (iso: string) => new Date(iso);
    const ev = (occurredAt: Date) => ({ ...event(SUBJECTS.tokenRevoked, { jti: randomUUID(), userId: target, expiresAt: new Date() }), occurredAt });
    // Recorded in this order; it happened in another (the second arrived late, after a bus outage).
    for (const when of ['2026-01-01T10:00:00.000Z', '2026-01-01T08:00:00.000Z', '2026-01-01T12:00:00.000Z', '2026-01-01T12:00:00.000Z', '2026-01-01T12:00:00.000Z']) {
      await record(ev(at(when)));
    }
    const all = (await q().list({ pageSize: 100, targetId: target })).items;
    expect(all.map((e) => e.occurredAt.toISOString())).toEqual([
      '2026-01-01T12:00:00.000Z',
      '2026-01-01T12:00:00.000Z',
      '2026-01-01T12:00:00.000Z',
      '2026-01-01T10:00:00.000Z',
      '2026-01-01T08:00:00.000Z',
    ]);
    // Pages of 2 cut through the three equal instants without loss or repeat.
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await q().list({ pageSize: 2, targetId: target, cursor });
      seen.push(...page.items.map((e) => e.seq));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.seq));
    const window = await q().list({ pageSize: 100, targetId: target, from: at('2026-01-01T07:00:00Z'), to: at('2026-01-01T11:00:00Z') });
    expect(window.items.map((e) => e.occurredAt.toISOString())).toEqual(['2026-01-01T10:00:00.000Z', '2026-01-01T08:00:00.000Z']);
  });

  it('events arriving together are recorded in groups, in arrival order, each once; one that fails fails alone', async () => {
    let transactions = 0;
    const counting: AuditUnitOfWork = { run: (fn) => (transactions++, uow.run(fn)) };
    const grouped = createRecorder(counting, { maxBatch: 100 });
    const head = (await q().verify()).checked;
    const carol = randomUUID();
    const events = Array.from({ length: 300 }, (_, i) => event(SUBJECTS.userCreated, user(randomUUID(), `group-${i}@example.com`, [])));
    const again = events[10]!;
    // A redelivery inside the same group, one of an event recorded in an earlier group, and an event
    // whose payload cannot be read (it fails alone; the rest of its group is recorded).
    const broken: IncomingEvent = { ...event(SUBJECTS.userCreated, user(carol, 'carol@example.com', [])), data: Buffer.from([0xff, 0xff, 0xff]) };
    const outcomes = await Promise.allSettled([...events.slice(0, 150), again, ...events.slice(150), again].map((e) => grouped(e)));
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(0);
    // 302 deliveries: the first alone (nothing waited for it), then groups of at most 100.
    expect(transactions).toBeLessThanOrEqual(5);
    transactions = 0;
    const late = event(SUBJECTS.userCreated, user(randomUUID(), 'late@example.com', []));
    const mixed = await Promise.allSettled([again, broken, late].map((e) => grouped(e)));
    expect(mixed.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // The first alone; the group of two fails and is retried one event per transaction.
    expect(transactions).toBe(4);
    const report = await q().verify();
    expect(report).toMatchObject({ ok: true });
    expect(report.checked).toBe(head + 301);
    const entries = await new PgAuditLog(db.ds.manager).entriesAfter(head, 1_000);
    expect(entries.map((e) => e.target.id)).toEqual([...events.map((e) => decodeUserId(e)), decodeUserId(late)]);
  });

  it('a crash before a group commits records none of it; the redelivery records each event once', async () => {
    const before = (await q().verify()).checked;
    // Every transaction dies after its inserts, before its commit (the process is gone: the fallback dies too).
    const dying: AuditUnitOfWork = {
      run: (fn) =>
        uow.run(async (tx) => {
          await fn(tx);
          throw new Error('killed before COMMIT');
        }),
    };
    const crashing = createRecorder(dying);
    const events = Array.from({ length: 20 }, (_, i) => event(SUBJECTS.userCreated, user(randomUUID(), `crash-${i}@example.com`, [])));
    const outcomes = await Promise.allSettled(events.map((e) => crashing(e)));
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
    expect((await q().verify()).checked).toBe(before);
    const redelivered = createRecorder(uow);
    await Promise.all([...events, ...events].map((e) => redelivered({ ...e, deliveryCount: 2 })));
    expect(await q().verify()).toMatchObject({ ok: true, checked: before + 20 });
  });

  it('append-only: UPDATE, DELETE and TRUNCATE are refused by the database', async () => {
    await expect(db.ds.query(`UPDATE audit_entries SET action = 'x' WHERE seq = 1`)).rejects.toThrow(/append-only/);
    await expect(db.ds.query('DELETE FROM audit_entries WHERE seq = 1')).rejects.toThrow(/append-only/);
    await expect(db.ds.query('TRUNCATE audit_entries')).rejects.toThrow(/append-only/);
    // The old retention flag is no pass any more: only audit_purge() may delete.
    await expect(
      db.ds.transaction(async (m) => {
        await m.query("SET LOCAL audit.retention = 'on'");
        await m.query('DELETE FROM audit_entries WHERE seq = 1');
      }),
    ).rejects.toThrow(/append-only/);
  });

  it('verify: the intact chain passes; an altered row, a removed row and a removed tail are each found', async () => {
    expect(await q().verify()).toMatchObject({ ok: true, firstSeq: 1 });
    const n = (await q().verify()).checked;
    // Tampering as a superuser would (triggers off for the session), then put back.
    const tamper = async (sql: string, params: unknown[] = []) => {
      await db.ds.transaction(async (m) => {
        await m.query("SET LOCAL session_replication_role = 'replica'");
        await m.query(sql, params);
      });
    };
    const [row] = await db.ds.query<Array<{ changes: unknown; user_agent: string | null }>>('SELECT changes, user_agent FROM audit_entries WHERE seq = 3');
    await tamper(`UPDATE audit_entries SET changes = '[]'::jsonb WHERE seq = 3`);
    expect(await q().verify()).toMatchObject({ ok: false, brokenAtSeq: 3, reason: expect.stringMatching(/altered/) });
    await tamper('UPDATE audit_entries SET changes = $1::jsonb WHERE seq = 3', [JSON.stringify(row!.changes)]);
    expect(await q().verify()).toMatchObject({ ok: true, checked: n });

    const saved = await db.ds.query<Array<Record<string, unknown>>>('SELECT * FROM audit_entries WHERE seq IN (5, $1) ORDER BY seq', [n]);
    await tamper('DELETE FROM audit_entries WHERE seq = 5');
    expect(await q().verify()).toMatchObject({ ok: false, brokenAtSeq: 6, reason: expect.stringMatching(/5\.\.5 are missing/) });
    await tamper(`DELETE FROM audit_entries WHERE seq = $1`, [n]);
    const restore = async (r: Record<string, unknown>) => {
      const cols = Object.keys(r);
      await tamper(`INSERT INTO audit_entries (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, cols.map((c) => (c === 'changes' ? JSON.stringify(r[c]) : r[c])));
    };
    await restore(saved[0]!);
    expect(await q().verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/chain ends at/) });
    await restore(saved[1]!);
    expect(await q().verify()).toMatchObject({ ok: true, checked: n });
  });

  it('verify while entries are being appended: one consistent view, never a false break', async () => {
    // Found in CI: verify read the chain head, then the entries; an entry committed between the
    // two reads made the chain look longer than its head ("the chain ends at N+1, its head says N").
    let appending = true;
    const appends = (async () => {
      for (let i = 0; appending && i < 400; i++) await record(event(SUBJECTS.tokenRevoked, { jti: randomUUID(), userId: bob, expiresAt: new Date() }, byAdmin));
    })();
    const reports = [];
    for (let i = 0; i < 60; i++) reports.push(await q().verify());
    appending = false;
    await appends;
    expect(reports.filter((r) => !r.ok)).toEqual([]);
    expect(await q().verify()).toMatchObject({ ok: true });
  });

  it('retention removes the oldest prefix in batches; the retained chain still verifies from its anchor', async () => {
    const before = (await q().verify()).checked;
    // Everything so far is "old": a cutoff in the future, 2 entries per batch.
    await db.ds.query(`ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only`);
    await db.ds.query(`UPDATE audit_entries SET recorded_at = recorded_at - interval '400 days' WHERE seq <= 4`);
    await db.ds.query(`ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only`);
    expect(await q().verify()).toMatchObject({ ok: true }); // recorded_at is not hashed: it is the database's clock, not the event
    await db.ds.query('UPDATE audit_settings SET retention_days = 365');
    expect(await purgeExpired(uow, { batch: 2 })).toBe(4);
    const after = await q().verify();
    expect(after).toMatchObject({ ok: true, firstSeq: 5, checked: before - 4 });
    // New entries keep chaining after the purge.
    await record(event(SUBJECTS.tokenRevoked, { jti: randomUUID(), userId: bob, expiresAt: new Date() }, byAdmin));
    expect(await q().verify()).toMatchObject({ ok: true, checked: before - 3 });
  });

  it('an event of a subject this build does not know is recorded by name', async () => {
    const e: IncomingEvent = { id: randomUUID(), subject: 'directory.group.created', data: new Uint8Array([1, 2, 3]), occurredAt: new Date(), deliveryCount: 1 };
    await record(e);
    expect((await q().list({ pageSize: 1 })).items[0]).toMatchObject({ action: 'directory.group.created', eventId: e.id, actor: { type: 'system' } });
  });
});
