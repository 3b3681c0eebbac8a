/**
 * The hash chain: each entry's hash covers its own content and the previous entry's hash, so
 * altering, removing or reordering any entry breaks every link after it. The content is hashed as
 * canonical JSON (keys sorted at every level), so the same entry always gives the same hash.
 */
import { createHash } from 'node:crypto';
import type { AuditEntry, EntryDraft } from './entry';

/** The "previous hash" of the first entry ever recorded. */
export const GENESIS_HASH = '0'.repeat(64);

export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** What is hashed: every recorded field but the hash itself. */
export type HashedFields = EntryDraft & Pick<AuditEntry, 'id' | 'seq' | 'prevHash'>;

export function entryHash(e: HashedFields): string {
  const content = canonicalJson({
    id: e.id,
    seq: e.seq,
    prevHash: e.prevHash,
    eventId: e.eventId,
    occurredAt: e.occurredAt.toISOString(),
    actor: e.actor,
    action: e.action,
    target: e.target,
    changes: e.changes,
    traceId: e.traceId,
    clientIp: e.clientIp,
    userAgent: e.userAgent,
  });
  return createHash('sha256').update(content).digest('hex');
}

/**
 * Checks one link: the entry follows `previous` (its seq and prevHash) and its hash is its own.
 * Returns why not, or undefined when the link holds.
 */
export function brokenLink(entry: AuditEntry, previous: { seq: number; hash: string }): string | undefined {
  if (entry.seq !== previous.seq + 1) return `entries ${previous.seq + 1}..${entry.seq - 1} are missing`;
  if (entry.prevHash !== previous.hash) return 'its previous-hash does not match the entry before it';
  if (entryHash(entry) !== entry.hash) return 'its content does not match its hash (the entry was altered)';
  return undefined;
}
