import { randomBytes } from 'node:crypto';
import { GENESIS_HASH, entryHash } from './chain';
import { checkpointKey, checkpointSigner } from './checkpoint';
import type { AuditEntry } from './entry';
import { ChainVerifier } from './verifier';

/** A chain of `n` entries, as the recorder makes them. */
function chain(n: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const fields = {
      id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
      seq,
      prevHash,
      eventId: `e-${seq}`,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
      actor: { type: 'system' as const },
      action: 'token.revoked',
      target: { type: 'user', id: 'u' },
      changes: [],
    };
    const e = { ...fields, recordedAt: fields.occurredAt, hash: entryHash(fields) };
    out.push(e);
    prevHash = e.hash;
  }
  return out;
}

const signer = checkpointSigner(randomBytes(32));
const key = checkpointKey(signer.publicKey);
const DAY = 86_400_000;

function verify(entries: AuditEntry[], opts: Partial<ConstructorParameters<typeof ChainVerifier>[0]> = {}) {
  const first = entries[0]!;
  const v = new ChainVerifier({ start: { firstSeq: first.seq, anchorHash: first.prevHash }, checkpoints: [], keys: [key], ...opts });
  for (const e of entries) if (!v.add(e)) break;
  return v.finish();
}

describe('the verifier', () => {
  const entries = chain(10);
  const at = (seq: number, when = new Date()) => signer.sign({ seq, hash: entries[seq - 1]!.hash }, when);

  it('a chain that matches its checkpoints holds; entries after the newest are counted as unsigned', () => {
    expect(verify(entries, { checkpoints: [at(3), at(7)] })).toEqual({
      ok: true,
      checked: 10,
      firstSeq: 1,
      checkpoint: { seq: 7, hash: entries[6]!.hash, signedAt: expect.any(Date) },
      checkpointsChecked: 2,
      checkpointsRejected: 0,
      unsignedEntries: 3,
    });
  });

  it('a key given in PEM verifies alike; checkpoints of another key are left out unless that key is given too (a rotation)', () => {
    const old = checkpointSigner(randomBytes(32));
    const byOld = old.sign({ seq: 9, hash: entries[8]!.hash }, new Date());
    expect(verify(entries, { checkpoints: [at(3), byOld], keys: [checkpointKey(signer.publicKeyPem)] })).toMatchObject({ ok: true, checkpoint: { seq: 3 }, checkpointsRejected: 1 });
    expect(verify(entries, { checkpoints: [at(3), byOld], keys: [key, checkpointKey(old.publicKey)] })).toMatchObject({ ok: true, checkpoint: { seq: 9 }, checkpointsRejected: 0 });
  });

  it('two checkpoints of one key that disagree on a seq: the entry differs from one of them', () => {
    const other = signer.sign({ seq: 5, hash: 'a'.repeat(64) }, new Date());
    expect(verify(entries, { checkpoints: [at(4), at(5), other] })).toMatchObject({
      ok: false,
      brokenAtSeq: 5,
      reason: expect.stringMatching(/^two checkpoints of seq 5 disagree \(the key signed two chains\): entry 5 matches the one signed at \S+, not the checkpoint at seq 5 signed at /),
    });
    expect(verify(entries, { checkpoints: [at(4), other] })).toMatchObject({ ok: false, brokenAtSeq: 5, reason: expect.stringMatching(/^entry 5 differs from the checkpoint at seq 5 signed at \S+: it was rewritten$/) });
  });

  it('the retained chain starts from an anchor a checkpoint was signed for: a different anchor is named', () => {
    const retained = entries.slice(4); // 1..4 removed by retention: the anchor is entry 4's hash
    expect(verify(retained, { checkpoints: [at(4)] })).toMatchObject({ ok: true, firstSeq: 5, checkpointsChecked: 1 });
    const moved = [{ ...retained[0]!, prevHash: 'b'.repeat(64) }, ...retained.slice(1)];
    expect(verify(moved, { checkpoints: [at(4)] })).toMatchObject({
      ok: false,
      brokenAtSeq: 5,
      reason: expect.stringMatching(/^the anchor the retained chain starts from \(entry 4, removed by retention\) differs from the checkpoint at seq 4/),
    });
  });

  it('a removed prefix is retention only when the checkpoints say it was old enough (an hour of clock skew allowed)', () => {
    const retained = entries.slice(6);
    const now = new Date();
    const days = 30;
    const young = [at(2, new Date(now.getTime() - 10 * DAY)), at(4, new Date(now.getTime() - 5 * DAY))];
    expect(verify(retained, { checkpoints: young, retention: { days, now } })).toMatchObject({
      ok: false,
      brokenAtSeq: 3,
      reason: expect.stringMatching(/^entries 3\.\.6 were removed before their retention of 30 days: the checkpoint at seq 2 signed at /),
    });
    const old = [at(2, new Date(now.getTime() - 40 * DAY)), at(4, new Date(now.getTime() - 30 * DAY + 30 * 60_000))];
    expect(verify(retained, { checkpoints: old, retention: { days, now } })).toMatchObject({ ok: true, firstSeq: 7 });
    // Without the retention (an export verified without --retention-days), nothing is said of the prefix.
    expect(verify(retained, { checkpoints: young })).toMatchObject({ ok: true });
  });
});
