/**
 * The export format of the auditor's tools: JSON Lines, one entry or one checkpoint a line.
 * An entry line has the shape `GET /api/v1/audit-events` gives each item (absent values as null),
 * so a page of the API and an export of the database read alike; a checkpoint line is
 * CheckpointJson (also the `checkpoint` of the service's "audit checkpoint signed" log line).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { type Checkpoint, parseCheckpoint } from '../domain/checkpoint';
import type { Actor, AuditEntry, FieldChange } from '../domain/entry';

export interface EntryJson {
  readonly id: string;
  readonly seq: number;
  readonly occurredAt: string;
  readonly recordedAt: string;
  readonly actor: { readonly type: Actor['type']; readonly id: string | null; readonly email: string | null };
  readonly action: string;
  readonly target: { readonly type: string; readonly id: string };
  readonly changes: readonly FieldChange[];
  readonly traceId: string | null;
  readonly clientIp: string | null;
  readonly userAgent: string | null;
  readonly eventId: string;
  readonly prevHash: string;
  readonly hash: string;
}

export function entryJson(e: AuditEntry): EntryJson {
  return {
    id: e.id,
    seq: e.seq,
    occurredAt: e.occurredAt.toISOString(),
    recordedAt: e.recordedAt.toISOString(),
    actor: { type: e.actor.type, id: e.actor.id ?? null, email: e.actor.email ?? null },
    action: e.action,
    target: { type: e.target.type, id: e.target.id },
    changes: e.changes,
    traceId: e.traceId ?? null,
    clientIp: e.clientIp ?? null,
    userAgent: e.userAgent ?? null,
    eventId: e.eventId,
    prevHash: e.prevHash,
    hash: e.hash,
  };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function date(v: unknown, field: string): Date {
  const d = typeof v === 'string' ? new Date(v) : new Date(Number.NaN);
  if (Number.isNaN(d.getTime())) throw new Error(`${field} must be an ISO 8601 time`);
  return d;
}

/** An entry from its line (API item or export); throws naming what is wrong. */
export function parseEntry(v: unknown): AuditEntry {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const actor = (o.actor ?? {}) as Record<string, unknown>;
  const target = (o.target ?? {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1) throw new Error('seq must be a whole number from 1');
  if (!['user', 'system', 'anonymous'].includes(actor.type as string)) throw new Error('actor.type must be user, system or anonymous');
  if (!Array.isArray(o.changes)) throw new Error('changes must be a list');
  for (const f of ['id', 'action', 'eventId', 'prevHash', 'hash'] as const) if (typeof o[f] !== 'string') throw new Error(`${f} must be a string`);
  const id = text(actor.id);
  const email = text(actor.email);
  return {
    id: o.id as string,
    seq: o.seq as number,
    occurredAt: date(o.occurredAt, 'occurredAt'),
    recordedAt: date(o.recordedAt, 'recordedAt'),
    actor: { type: actor.type as Actor['type'], ...(id ? { id } : {}), ...(email ? { email } : {}) },
    action: o.action as string,
    target: { type: typeof target.type === 'string' ? target.type : '', id: typeof target.id === 'string' ? target.id : '' },
    changes: o.changes as FieldChange[],
    traceId: text(o.traceId),
    clientIp: text(o.clientIp),
    userAgent: text(o.userAgent),
    eventId: o.eventId as string,
    prevHash: o.prevHash as string,
    hash: o.hash as string,
  };
}

/** The lines of a JSON Lines file, parsed by `parse`; an error names the file and line. */
export async function readJsonl<T>(file: string, parse: (v: unknown) => T): Promise<T[]> {
  const out: T[] = [];
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (line.trim() === '') continue;
    try {
      out.push(parse(JSON.parse(line)));
    } catch (err) {
      throw new Error(`${file}:${n}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** A checkpoint line: CheckpointJson, or a whole "audit checkpoint signed" log line (its `checkpoint`). */
export function parseCheckpointLine(v: unknown): Checkpoint {
  const o = v as { checkpoint?: unknown } | null;
  return parseCheckpoint(o && typeof o === 'object' && 'checkpoint' in o ? o.checkpoint : v);
}
