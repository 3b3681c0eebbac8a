/**
 * What the audit context needs from the outside: its log (append-only, chained), its projection,
 * and the record of its signed checkpoints, which lives outside its database.
 */
import type { Checkpoint } from './checkpoint';
import type { AuditEntry, AuditFilter, AuditPage, AuditPosition, ChainReport, EntryDraft } from './entry';
import type { ChainStart, ChainWalker } from './verifier';

/** The trail's own memory of the directory, to say what a change changed and who an actor was. */
export interface KnownUser {
  readonly id: string;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly roles: readonly string[];
}

export interface Projection {
  user(id: string): Promise<KnownUser | undefined>;
  saveUser(user: KnownUser): Promise<void>;
  name(kind: 'role' | 'permission', id: string): Promise<string | undefined>;
  saveName(kind: 'role' | 'permission', id: string, name: string): Promise<void>;
}

export interface AuditLog {
  /** Whether an event was recorded already (redelivery). */
  has(eventId: string): Promise<boolean>;
  /** Which of these events were recorded already (redeliveries). */
  recorded(eventIds: readonly string[]): Promise<Set<string>>;
  /** Appends at the end of the chain (serialised: one append at a time). */
  append(draft: EntryDraft): Promise<AuditEntry>;
  /** Appends these, in this order, at the end of the chain: one lock of the chain and one insert. */
  appendAll(drafts: readonly EntryDraft[]): Promise<void>;
  /** The chain's last entry: its seq and hash (0 and the genesis hash while empty). */
  head(): Promise<{ seq: number; hash: string }>;
  list(filter: AuditFilter, page: { before?: AuditPosition; limit: number }): Promise<AuditPage>;
  /**
   * Feeds the chain in seq order, in one consistent snapshot, to the walker made for where the
   * walk starts: the retained start, or just after `from` (a signed position) while that is
   * retained. Returns the walker's report and the chain's head in that snapshot.
   */
  verify(walker: (start: ChainStart) => ChainWalker, from?: { seq: number; hash: string }): Promise<{ report: ChainReport; head: { seq: number; hash: string } }>;
  /**
   * Removes at most `batch` of the oldest entries recorded more than the database's retention
   * setting ago (a prefix of the chain); returns how many went.
   */
  purge(batch: number): Promise<number>;
}

/** One transaction over the log and the projection. */
export interface AuditUnitOfWork {
  run<T>(fn: (tx: { log: AuditLog; projection: Projection }) => Promise<T>): Promise<T>;
}

/**
 * Where the signed checkpoints are kept, outside the audit database (a JetStream stream of their
 * own). Both throw when the store cannot be reached.
 */
export interface CheckpointLog {
  publish(checkpoint: Checkpoint): Promise<void>;
  /** The newest `limit` checkpoints, oldest first; any that cannot be read as one are left out. */
  read(limit: number): Promise<Checkpoint[]>;
}
