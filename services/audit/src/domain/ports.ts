/** What the audit context needs from the outside: its log (append-only, chained) and its projection. */
import type { AuditEntry, AuditFilter, AuditPage, AuditPosition, ChainReport, EntryDraft } from './entry';

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
  /** Appends at the end of the chain (serialised: one append at a time). */
  append(draft: EntryDraft): Promise<AuditEntry>;
  list(filter: AuditFilter, page: { before?: AuditPosition; limit: number }): Promise<AuditPage>;
  verify(): Promise<ChainReport>;
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
