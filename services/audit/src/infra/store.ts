/**
 * The audit log and its projection in PostgreSQL. Appends are serialised on the one chain row
 * (`audit_chain`, locked FOR UPDATE): the next seq and the previous hash are read and written in
 * the same transaction as the entry, so the chain has no fork and no gap. The table refuses
 * UPDATE and TRUNCATE, and DELETE except in the retention step (a trigger; the runtime role
 * should hold only SELECT and INSERT besides, see the README).
 */
import { randomUUID } from 'node:crypto';
import { escapeLike } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import { GENESIS_HASH, entryHash } from '../domain/chain';
import type { Actor, AuditEntry, AuditFilter, AuditPage, AuditPosition, ChainReport, EntryDraft, FieldChange, Target } from '../domain/entry';
import type { AuditLog, KnownUser, Projection } from '../domain/ports';
import type { ChainStart, ChainWalker } from '../domain/verifier';

interface EntryRow {
  seq: string;
  id: string;
  event_id: string;
  occurred_at: Date;
  recorded_at: Date;
  actor_type: Actor['type'];
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target_type: string;
  target_id: string;
  changes: FieldChange[];
  trace_id: string | null;
  client_ip: string | null;
  user_agent: string | null;
  prev_hash: string;
  hash: string;
}

const COLUMNS =
  'seq, id, event_id, occurred_at, recorded_at, actor_type, actor_id, actor_email, action, target_type, target_id, changes, trace_id, client_ip, user_agent, prev_hash, hash';

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

function toEntry(r: EntryRow): AuditEntry {
  const actor: Actor = { type: r.actor_type, ...(r.actor_id ? { id: r.actor_id } : {}), ...(r.actor_email ? { email: r.actor_email } : {}) };
  const target: Target = { type: r.target_type, id: r.target_id };
  return {
    seq: Number(r.seq),
    id: r.id,
    eventId: r.event_id,
    occurredAt: r.occurred_at,
    recordedAt: r.recorded_at,
    actor,
    action: r.action,
    target,
    changes: r.changes,
    traceId: opt(r.trace_id),
    clientIp: opt(r.client_ip),
    userAgent: opt(r.user_agent),
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

interface ChainRow {
  last_seq: string;
  last_hash: string;
  first_seq: string;
  anchor_hash: string;
}

const VERIFY_BATCH = 5_000;

export class PgAuditLog implements AuditLog {
  constructor(private readonly m: EntityManager) {}

  async has(eventId: string): Promise<boolean> {
    const rows = await this.m.query<unknown[]>('SELECT 1 FROM audit_entries WHERE event_id = $1', [eventId]);
    return rows.length > 0;
  }

  async recorded(eventIds: readonly string[]): Promise<Set<string>> {
    if (eventIds.length === 0) return new Set();
    const rows = await this.m.query<Array<{ event_id: string }>>('SELECT event_id FROM audit_entries WHERE event_id = ANY($1::text[])', [[...eventIds]]);
    return new Set(rows.map((r) => r.event_id));
  }

  async append(d: EntryDraft): Promise<AuditEntry> {
    const [entry] = await this.insert([d], true);
    return entry!;
  }

  async appendAll(drafts: readonly EntryDraft[]): Promise<void> {
    if (drafts.length > 0) await this.insert(drafts, false);
  }

  /** Locks the chain's head, chains the drafts on it, inserts them in one statement and moves the head. */
  private async insert(drafts: readonly EntryDraft[], returning: boolean): Promise<AuditEntry[]> {
    const [head] = await this.m.query<ChainRow[]>('SELECT last_seq, last_hash FROM audit_chain WHERE id = 1 FOR UPDATE');
    if (!head) throw new Error('audit_chain has no head row (migrations not run?)');
    let seq = Number(head.last_seq);
    let prevHash = head.last_hash;
    const params: unknown[] = [];
    const tuples: string[] = [];
    for (const d of drafts) {
      seq += 1;
      const fields = { ...d, id: randomUUID(), seq, prevHash };
      const hash = entryHash(fields);
      const at = params.length;
      params.push(
        seq,
        fields.id,
        d.eventId,
        d.occurredAt,
        d.actor.type,
        d.actor.id ?? null,
        d.actor.email ?? null,
        d.action,
        d.target.type,
        d.target.id,
        JSON.stringify(d.changes),
        d.traceId ?? null,
        d.clientIp ?? null,
        d.userAgent ?? null,
        prevHash,
        hash,
      );
      const p = (i: number) => `$${at + i}`;
      tuples.push(`(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, clock_timestamp(), ${[5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16].map(p).join(', ')})`);
      prevHash = hash;
    }
    const rows = await this.m.query<EntryRow[]>(`INSERT INTO audit_entries (${COLUMNS}) VALUES ${tuples.join(', ')}${returning ? ` RETURNING ${COLUMNS}` : ''}`, params);
    await this.m.query('UPDATE audit_chain SET last_seq = $1, last_hash = $2 WHERE id = 1', [seq, prevHash]);
    return returning ? rows.map(toEntry) : [];
  }

  async head(): Promise<{ seq: number; hash: string }> {
    const [row] = await this.m.query<ChainRow[]>('SELECT last_seq, last_hash FROM audit_chain WHERE id = 1');
    if (!row) throw new Error('audit_chain has no head row (migrations not run?)');
    return { seq: Number(row.last_seq), hash: row.last_hash };
  }

  async list(f: AuditFilter, page: { before?: AuditPosition; limit: number }): Promise<AuditPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: (n: number) => string, value: unknown) => {
      params.push(value);
      where.push(sql(params.length));
    };
    if (page.before !== undefined) {
      // Keyset on (occurred_at, seq): the index order (ix_audit_time and the filters' indexes).
      params.push(page.before.occurredUs, page.before.seq);
      const [us, seq] = [params.length - 1, params.length];
      where.push(`(occurred_at, seq) < (timestamptz 'epoch' + $${us}::bigint * interval '1 microsecond', $${seq}::bigint)`);
    }
    if (f.actorId) add((n) => `actor_id = $${n}`, f.actorId);
    if (f.targetId) add((n) => `target_id = $${n}`, f.targetId);
    if (f.action) add((n) => `action LIKE $${n} ESCAPE '\\'`, `${escapeLike(f.action)}%`);
    if (f.from) add((n) => `occurred_at >= $${n}`, f.from);
    if (f.to) add((n) => `occurred_at < $${n}`, f.to);
    params.push(page.limit + 1);
    const rows = await this.m.query<Array<EntryRow & { occurred_us: string }>>(
      `SELECT ${COLUMNS}, (extract(epoch FROM occurred_at) * 1000000)::bigint AS occurred_us
         FROM audit_entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY occurred_at DESC, seq DESC LIMIT $${params.length}`,
      params,
    );
    const items = rows.slice(0, page.limit).map(toEntry);
    const last = rows.length > page.limit ? rows[page.limit - 1]! : undefined;
    return { items, next: last ? { occurredUs: String(last.occurred_us), seq: Number(last.seq) } : undefined };
  }

  /**
   * Runs as the first statement of its transaction: the head and every batch are read in one
   * snapshot (REPEATABLE READ), so an entry appended or a prefix purged meanwhile is not taken
   * for a break. In one snapshot an entry past the head can only have been written around the
   * recorder, and is reported.
   */
  async verify(walker: (start: ChainStart) => ChainWalker, from?: { seq: number; hash: string }): Promise<{ report: ChainReport; head: { seq: number; hash: string } }> {
    await this.m.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const [row] = await this.m.query<ChainRow[]>('SELECT last_seq, last_hash, first_seq, anchor_hash FROM audit_chain WHERE id = 1');
    if (!row) throw new Error('audit_chain has no head row (migrations not run?)');
    const head = { seq: Number(row.last_seq), hash: row.last_hash };
    const retained = { firstSeq: Number(row.first_seq), anchorHash: row.anchor_hash };
    const start = from && from.seq >= retained.firstSeq - 1 ? { firstSeq: from.seq + 1, anchorHash: from.hash } : retained;
    const walk = walker(start);
    for (let after = start.firstSeq - 1; ; ) {
      const batch = await this.entriesAfter(after, VERIFY_BATCH);
      if (batch.length === 0) break;
      for (const e of batch) if (!walk.add(e)) return { report: walk.finish(), head };
      after = batch[batch.length - 1]!.seq;
    }
    // The end of the chain is where the head says: entries removed from the end show here.
    return { report: walk.finish(head), head };
  }

  /** Entries with seq above `after`, in seq order, at most `limit` (the export reads the trail so). */
  async entriesAfter(after: number, limit: number): Promise<AuditEntry[]> {
    const rows = await this.m.query<EntryRow[]>(`SELECT ${COLUMNS} FROM audit_entries WHERE seq > $1 ORDER BY seq LIMIT $2`, [after, limit]);
    return rows.map(toEntry);
  }

  async purge(batch: number): Promise<number> {
    // audit_purge() runs as the schema's owner: the runtime role has no DELETE (see the migration).
    const [row] = await this.m.query<Array<{ removed: number }>>('SELECT audit_purge($1) AS removed', [batch]);
    return row?.removed ?? 0;
  }
}

export class PgProjection implements Projection {
  constructor(private readonly m: EntityManager) {}

  async user(id: string): Promise<KnownUser | undefined> {
    const [r] = await this.m.query<Array<{ user_id: string; email: string; first_name: string; last_name: string; roles: string[] }>>(
      'SELECT user_id, email, first_name, last_name, roles FROM audit_users WHERE user_id = $1',
      [id],
    );
    return r ? { id: r.user_id, email: r.email, firstName: r.first_name, lastName: r.last_name, roles: r.roles } : undefined;
  }

  async saveUser(u: KnownUser): Promise<void> {
    await this.m.query(
      `INSERT INTO audit_users (user_id, email, first_name, last_name, roles) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id) DO UPDATE SET email = $2, first_name = $3, last_name = $4, roles = $5`,
      [u.id, u.email, u.firstName, u.lastName, [...u.roles]],
    );
  }

  async name(kind: 'role' | 'permission', id: string): Promise<string | undefined> {
    const [r] = await this.m.query<Array<{ name: string }>>('SELECT name FROM audit_names WHERE kind = $1 AND id = $2', [kind, id]);
    return r?.name;
  }

  async saveName(kind: 'role' | 'permission', id: string, name: string): Promise<void> {
    await this.m.query('INSERT INTO audit_names (kind, id, name) VALUES ($1, $2, $3) ON CONFLICT (kind, id) DO UPDATE SET name = $3', [kind, id, name]);
  }
}

export { GENESIS_HASH };
