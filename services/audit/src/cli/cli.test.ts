/**
 * The auditor's tools on the real PostgreSQL: the trail and its checkpoints exported as JSON
 * Lines (export.ts), then verified with nothing but the public key (verify.ts, the service's own
 * verifier): an honest export holds; a cut tail, an entry rewritten with the chain after it
 * recomputed, and a forged checkpoint are each named.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { STREAMS, SUBJECTS, eventsV1, encodeEvent } from '@iam/contracts';
import { InMemoryEventBus, outboxUnitOfWork } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { createCheckpointer } from '../app/checkpoints';
import { createRecorder } from '../app/record';
import { entryHash } from '../domain/chain';
import { checkpointJson, checkpointSigner } from '../domain/checkpoint';
import { BusCheckpointLog } from '../infra/checkpoint-log';
import { entities, migrations } from '../infra/schema';
import { PgAuditLog, PgProjection } from '../infra/store';
import { exportCheckpoints, exportEntries } from './export';
import { type EntryJson, parseEntry } from './jsonl';
import { verifyCommand } from './verify';

describe('audit export and verify commands', () => {
  const signer = checkpointSigner(randomBytes(32));
  const bus = new InMemoryEventBus({ logger: testLogger() });
  const dir = mkdtempSync(join(tmpdir(), 'audit-cli-'));
  const file = (name: string) => join(dir, name);
  let db: MigratedDatabase;

  const verify = async (...args: string[]): Promise<{ code: number; report: Record<string, unknown> & { reason?: string } }> => {
    let text = '';
    const code = await verifyCommand(args, (t) => (text += t));
    return { code, report: code === 2 ? { reason: text } : JSON.parse(text) };
  };
  const standard = (entries: string) => ['--public-key', signer.publicKey, '--entries', entries, '--checkpoints', file('checkpoints.jsonl')];
  const lines = (name: string): EntryJson[] => readFileSync(file(name), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EntryJson);
  const write = (name: string, entries: readonly unknown[]) => writeFileSync(file(name), entries.map((e) => JSON.stringify(e)).join('\n'));

  beforeAll(async () => {
    db = await migratedTestDatabase('audit_cli', { entities, migrations });
    await bus.declareStreams([STREAMS.auditCheckpoints]);
    const uow = outboxUnitOfWork(db.ds, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
    const log = new BusCheckpointLog(bus);
    const checkpointer = createCheckpointer({ uow, log, signer, logger: testLogger() }, { every: 1_000, intervalMs: 3_600_000 });
    await checkpointer.checkpoint(); // its first try, at start (nothing to sign yet), is over
    const record = createRecorder(uow);
    const user = randomUUID();
    for (let i = 1; i <= 9; i++) {
      const roles = i === 5 ? ['Administrator'] : ['Support'];
      const data = encodeEvent(SUBJECTS.userUpdated, eventsV1.UserChanged.create({ userId: user, email: 'bob@example.com', firstName: 'Bob', lastName: 'B', roles, changedFields: ['roles'] }));
      await record({ id: randomUUID(), subject: SUBJECTS.userUpdated, data, occurredAt: new Date(), deliveryCount: 1, headers: { 'iam-client-ip': '203.0.113.5' } });
      if (i % 2 === 0 || i === 5) await checkpointer.checkpoint(); // checkpoints at 2, 4, 5, 6, 8
    }
    await checkpointer.stop();
    // Checkpoints first, entries after (as the README says).
    const out: string[] = [];
    expect(await exportCheckpoints(log, (l) => out.push(l))).toBe(5);
    writeFileSync(file('checkpoints.jsonl'), out.join('\n'));
    const entries: string[] = [];
    expect(await exportEntries(db.ds, (l) => entries.push(l))).toBe(9);
    writeFileSync(file('entries.jsonl'), entries.join('\n'));
  });

  afterAll(async () => {
    await bus.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an honest export verifies with the public key alone, in any line order and in the API shape; unsigned entries counted', async () => {
    const { code, report } = await verify(...standard(file('entries.jsonl')));
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, checked: 9, firstSeq: 1, checkpoint: { seq: 8 }, checkpointsChecked: 5, unsignedEntries: 1, keyIds: [signer.keyId] });
    // Newest first, as the API pages them; the PEM form of the key; checkpoints given as whole log lines.
    write('newest-first.jsonl', lines('entries.jsonl').reverse());
    writeFileSync(file('key.pem'), signer.publicKeyPem);
    const logLines = readFileSync(file('checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.stringify({ level: 'info', checkpoint: JSON.parse(l), msg: 'audit checkpoint signed' }));
    writeFileSync(file('log.jsonl'), logLines.join('\n'));
    expect((await verify('--public-key', file('key.pem'), '--entries', file('newest-first.jsonl'), '--checkpoints', file('log.jsonl'))).code).toBe(0);
    expect(parseEntry(lines('entries.jsonl')[0])).toMatchObject({ seq: 1, clientIp: '203.0.113.5', actor: { type: 'anonymous' } });
  });

  it('a cut tail is named', async () => {
    write('cut.jsonl', lines('entries.jsonl').filter((e) => e.seq < 5));
    const { code, report } = await verify(...standard(file('cut.jsonl')));
    expect(code).toBe(1);
    expect(report).toMatchObject({ ok: false, brokenAtSeq: 5 });
    expect(report.reason).toMatch(/^entries after seq 4 are missing: the checkpoint at seq 8 signed at \S+ is past the chain's end$/);
  });

  it('an entry rewritten with every later hash recomputed is named; one altered without is named by its broken link', async () => {
    const all = lines('entries.jsonl');
    let prev = all[0]!.prevHash;
    const rewritten = all.map((line) => {
      const e = parseEntry(line);
      const changes = e.seq === 5 ? [{ field: 'roles', before: ['Support'], after: ['Support'] }] : e.changes;
      const hash = entryHash({ ...e, changes, prevHash: prev });
      const out = { ...line, changes, prevHash: prev, hash };
      prev = hash;
      return out;
    });
    write('rewritten.jsonl', rewritten);
    const { code, report } = await verify(...standard(file('rewritten.jsonl')));
    expect(code).toBe(1);
    expect(report).toMatchObject({ ok: false, brokenAtSeq: 5 });
    expect(report.reason).toMatch(/^entry 5 differs from the checkpoint at seq 5 signed at \S+: it was rewritten$/);

    write('altered.jsonl', all.map((e) => (e.seq === 7 ? { ...e, action: 'user.updated' } : e)));
    expect((await verify(...standard(file('altered.jsonl')))).report).toMatchObject({ ok: false, brokenAtSeq: 7, reason: expect.stringMatching(/altered/) });
  });

  it('a checkpoint no given key verifies fails the audit; bad arguments and input exit 2', async () => {
    const forged = checkpointJson(checkpointSigner(randomBytes(32)).sign({ seq: 3, hash: 'a'.repeat(64) }, new Date()));
    writeFileSync(file('forged.jsonl'), `${readFileSync(file('checkpoints.jsonl'), 'utf8')}\n${JSON.stringify(forged)}`);
    const { code, report } = await verify('--public-key', signer.publicKey, '--entries', file('entries.jsonl'), '--checkpoints', file('forged.jsonl'));
    expect(code).toBe(1);
    expect(report).toMatchObject({ ok: false, checkpointsRejected: 1, reason: '1 checkpoint(s) are not validly signed by the given key(s)' });

    expect((await verify('--entries', file('entries.jsonl'))).code).toBe(2);
    expect((await verify('--public-key', 'not-a-key', '--entries', file('entries.jsonl'), '--checkpoints', file('checkpoints.jsonl'))).code).toBe(2);
    writeFileSync(file('broken.jsonl'), '{"seq": "one"}');
    const bad = await verify(...standard(file('broken.jsonl')));
    expect(bad).toMatchObject({ code: 2, report: { reason: expect.stringContaining('broken.jsonl:1: seq must be a whole number') } });
  });
});
