/**
 * Reading the trail: newest first, keyset pages behind an opaque cursor (no OFFSET on a large
 * table); and verifying it against the signed checkpoints kept outside its database.
 */
import { AppError } from '@iam/platform';
import type { CheckpointKey } from '../domain/checkpoint';
import type { AuditFilter, AuditPage, AuditPosition, ChainReport } from '../domain/entry';
import type { AuditUnitOfWork, CheckpointLog } from '../domain/ports';
import { ChainVerifier } from '../domain/verifier';

export const PAGE_SIZE_MAX = 100;
const CURSOR_RE = /^a2\.(-?\d{1,19})\.(\d{1,16})$/;
/**
 * The instants a cursor may name, in microseconds since the epoch: years 1 to 9999, what a
 * timestamp of the trail (and a JS Date, and PostgreSQL's interval arithmetic) can hold. A cursor
 * beyond them was not given out by this API (was a 500: "interval out of range").
 */
const OCCURRED_US_MIN = -62_135_596_800_000_000n;
const OCCURRED_US_MAX = 253_402_300_799_999_999n;

/** The opaque cursor of a position (base64url of `a2.<occurred µs>.<seq>`). */
export function encodeCursor(p: AuditPosition): string {
  return Buffer.from(`a2.${p.occurredUs}.${p.seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): AuditPosition {
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const m = CURSOR_RE.exec(text);
  const seq = m ? Number(m[2]) : Number.NaN;
  const us = m ? BigInt(m[1]!) : 0n;
  if (!m || !Number.isSafeInteger(seq) || seq < 1 || us < OCCURRED_US_MIN || us > OCCURRED_US_MAX) throw AppError.validation('The cursor is not one this API gave out.', [{ field: 'cursor', message: 'is not valid' }]);
  return { occurredUs: m[1]!, seq };
}

export interface ListRequest extends AuditFilter {
  readonly pageSize: number;
  readonly cursor?: string;
}

/** A verification, and the key the checkpoints were checked with (what an auditor needs to repeat it). */
export interface VerifyReport extends ChainReport {
  readonly keyId: string;
  readonly publicKey: string;
}

export interface AuditQueries {
  list(r: ListRequest): Promise<AuditPage & { nextCursor?: string }>;
  verify(): Promise<VerifyReport>;
}

export interface VerifyDeps {
  readonly checkpoints: CheckpointLog;
  /** The service's checkpoint key. */
  readonly key: CheckpointKey;
  /** The retention (AUDIT_RETENTION_DAYS): a prefix removed sooner is reported. */
  readonly retentionDays: number;
  readonly clock?: () => Date;
}

/** The newest checkpoints a verification holds the chain against (the newest one alone covers every entry before it). */
export const VERIFY_CHECKPOINTS = 100_000;

export function auditQueries(uow: AuditUnitOfWork, v: VerifyDeps): AuditQueries {
  return {
    async list(r) {
      const errors: Array<{ field: string; message: string }> = [];
      if (!Number.isInteger(r.pageSize) || r.pageSize < 1 || r.pageSize > PAGE_SIZE_MAX) errors.push({ field: 'pageSize', message: `must be 1..${PAGE_SIZE_MAX}` });
      if (r.action !== undefined && r.action.length > 100) errors.push({ field: 'action', message: 'must be at most 100 characters' });
      if (r.from && r.to && r.from > r.to) errors.push({ field: 'from', message: 'must not be after to' });
      for (const [field, v] of [['actorId', r.actorId], ['targetId', r.targetId], ['action', r.action]] as const) {
        if (v?.includes('\u0000')) errors.push({ field, message: 'must not contain NUL characters' });
      }
      if (errors.length) throw AppError.validation('The filters are not valid.', errors);
      const before = r.cursor ? decodeCursor(r.cursor) : undefined;
      const page = await uow.run(({ log }) => log.list(r, { before, limit: r.pageSize }));
      return { ...page, nextCursor: page.next === undefined ? undefined : encodeCursor(page.next) };
    },
    async verify() {
      // The checkpoints first, the chain's snapshot after: every checkpoint read was signed over
      // entries already committed, so none can be past the end of the chain read next.
      const checkpoints = await v.checkpoints.read(VERIFY_CHECKPOINTS).catch((err: unknown) => {
        throw AppError.unavailable('The signed checkpoints cannot be read (the event bus is unreachable): the trail cannot be verified now.', err);
      });
      const now = (v.clock ?? (() => new Date()))();
      const verifier = (start: { firstSeq: number; anchorHash: string }) =>
        new ChainVerifier({ start, checkpoints, keys: [v.key], retention: { days: v.retentionDays, now } });
      const { report } = await uow.run(({ log }) => log.verify(verifier));
      return { ...report, keyId: v.key.keyId, publicKey: v.key.publicKey };
    },
  };
}
