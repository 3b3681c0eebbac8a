/**
 * Verification of the chain against its signed checkpoints, one entry at a time in seq order:
 * the service (over its database) and the auditor's command (over an export) run this same code.
 * An entry must link to the one before it (chain.ts); an entry a trusted checkpoint was signed
 * for must have the checkpoint's hash (else it was rewritten, the chain after it recomputed); the
 * chain must reach the newest checkpoint (else its tail was cut); the retained chain's anchor
 * must match a checkpoint signed for it; and, given the retention, the prefix retention removed
 * must be old enough to have been removed.
 */
import { brokenLink } from './chain';
import type { Checkpoint, CheckpointKey } from './checkpoint';
import type { AuditEntry, ChainReport } from './entry';

/** Where a walk of the chain starts: its first seq and the hash before it (the anchor). */
export interface ChainStart {
  readonly firstSeq: number;
  readonly anchorHash: string;
}

/** What a walk of the chain is fed with (the store's verify drives it). */
export interface ChainWalker {
  /** The next entry in seq order; false once the chain is found broken (feed no more). */
  add(entry: AuditEntry): boolean;
  /** The report, given the chain's head when the walk read one (the database's chain row). */
  finish(head?: { readonly seq: number; readonly hash: string }): ChainReport;
}

export interface VerifyOptions {
  readonly start: ChainStart;
  /** Every checkpoint at hand; those no key in `keys` verifies are counted and left out. */
  readonly checkpoints: readonly Checkpoint[];
  readonly keys: readonly CheckpointKey[];
  /** The retention, to tell a prefix removed too early from retention's. */
  readonly retention?: { readonly days: number; readonly now: Date };
}

/** The clocks of the database (recorded_at) and of the signer (signedAt) may differ this much. */
const CLOCK_SKEW_MS = 3_600_000;
const DAY_MS = 86_400_000;

interface Failure {
  readonly brokenAtSeq: number;
  readonly reason: string;
}

const signed = (c: Checkpoint): string => `the checkpoint at seq ${c.seq} signed at ${c.signedAt.toISOString()}`;

export class ChainVerifier implements ChainWalker {
  private readonly firstSeq: number;
  private readonly bySeq = new Map<number, Checkpoint[]>();
  private readonly newest?: Checkpoint;
  private readonly rejected: number;
  private previous: { seq: number; hash: string };
  /** The last seq a checkpoint vouched for (or the one before the start). */
  private vouched: number;
  private compared = 0;
  private checked = 0;
  private failure?: Failure;

  constructor(o: VerifyOptions) {
    const trusted = o.checkpoints.filter((c) => o.keys.some((k) => k.verifies(c)));
    this.rejected = o.checkpoints.length - trusted.length;
    this.firstSeq = o.start.firstSeq;
    this.previous = { seq: o.start.firstSeq - 1, hash: o.start.anchorHash };
    this.vouched = this.previous.seq;
    for (const c of trusted) {
      if (!this.newest || c.seq > this.newest.seq) this.newest = c;
      if (c.seq >= this.previous.seq) this.bySeq.set(c.seq, [...(this.bySeq.get(c.seq) ?? []), c]);
    }
    this.failure = this.checkAnchor() ?? this.checkRetention(trusted, o.retention);
  }

  /** A checkpoint signed for the anchor's entry (removed by retention since) must carry the anchor. */
  private checkAnchor(): Failure | undefined {
    const at = this.bySeq.get(this.previous.seq) ?? [];
    const differs = at.find((c) => c.hash !== this.previous.hash);
    if (differs) return { brokenAtSeq: this.firstSeq, reason: `the anchor the retained chain starts from (entry ${differs.seq}, removed by retention) differs from ${signed(differs)}` };
    this.vouch(at);
    return undefined;
  }

  /**
   * Entries after a checkpoint's seq were recorded after it was signed: if retention removed any
   * of them although that was less than the retention ago, something else removed them.
   */
  private checkRetention(trusted: readonly Checkpoint[], retention: VerifyOptions['retention']): Failure | undefined {
    const lastRemoved = this.firstSeq - 1;
    if (!retention || lastRemoved < 1) return undefined;
    const cutoff = retention.now.getTime() - retention.days * DAY_MS;
    const before = trusted
      .filter((c) => c.seq < lastRemoved && c.signedAt.getTime() - CLOCK_SKEW_MS > cutoff)
      .sort((a, b) => a.seq - b.seq)[0];
    if (!before) return undefined;
    return {
      brokenAtSeq: before.seq + 1,
      reason: `entries ${before.seq + 1}..${lastRemoved} were removed before their retention of ${retention.days} days: ${signed(before)} shows they were recorded after it`,
    };
  }

  add(entry: AuditEntry): boolean {
    if (this.failure) return false;
    const reason = brokenLink(entry, this.previous);
    if (reason) {
      this.failure = { brokenAtSeq: entry.seq, reason };
      return false;
    }
    const at = this.bySeq.get(entry.seq) ?? [];
    const differs = at.find((c) => c.hash !== entry.hash);
    if (differs) {
      const matches = at.find((c) => c.hash === entry.hash);
      this.failure = matches
        ? { brokenAtSeq: entry.seq, reason: `two checkpoints of seq ${entry.seq} disagree (the key signed two chains): entry ${entry.seq} matches the one signed at ${matches.signedAt.toISOString()}, not ${signed(differs)}` }
        : this.rewritten(entry.seq, differs);
      return false;
    }
    this.vouch(at);
    this.checked++;
    this.previous = { seq: entry.seq, hash: entry.hash };
    return true;
  }

  /** Checkpoints that matched their entry (or the anchor): nothing before them was rewritten. */
  private vouch(matched: readonly Checkpoint[]): void {
    if (matched.length === 0) return;
    this.compared += matched.length;
    this.vouched = matched[0]!.seq;
  }

  /** Entry `seq` differs from its checkpoint: it, or one since the last vouched-for entry, was rewritten. */
  private rewritten(seq: number, c: Checkpoint): Failure {
    const from = this.vouched + 1;
    if (from === seq) return { brokenAtSeq: seq, reason: `entry ${seq} differs from ${signed(c)}: it was rewritten` };
    const since = this.vouched >= this.firstSeq ? ` (the checkpoint at seq ${this.vouched} still matches)` : '';
    return { brokenAtSeq: from, reason: `an entry in ${from}..${seq} was rewritten and the chain after it recomputed: entry ${seq} differs from ${signed(c)}${since}` };
  }

  finish(head?: { readonly seq: number; readonly hash: string }): ChainReport {
    const end = this.previous.seq;
    const newest = this.newest;
    if (!this.failure && newest && newest.seq > end) {
      this.failure = { brokenAtSeq: end + 1, reason: `entries after seq ${end} are missing: ${signed(newest)} is past the chain's end` };
    }
    if (!this.failure && head && (head.seq !== end || head.hash !== this.previous.hash)) {
      this.failure = { brokenAtSeq: end + 1, reason: `the chain ends at ${end}, its head says ${head.seq}` };
    }
    return {
      ok: !this.failure,
      checked: this.checked,
      firstSeq: this.firstSeq,
      ...(this.failure ?? {}),
      ...(newest ? { checkpoint: { seq: newest.seq, hash: newest.hash, signedAt: newest.signedAt } } : {}),
      checkpointsChecked: this.compared,
      checkpointsRejected: this.rejected,
      unsignedEntries: Math.max(0, end - Math.max(newest?.seq ?? 0, this.firstSeq - 1)),
    };
  }
}
