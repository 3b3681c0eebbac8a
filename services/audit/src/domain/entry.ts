/**
 * An audit entry: who did what to what, when, from where, and which fields changed. Secrets never
 * enter one: a secret field (a password) appears only as `redacted`, never with a value, and
 * tokens, hashes and links are not fields of any event the trail reads.
 */
export type ActorType = 'user' | 'system' | 'anonymous';

export interface Actor {
  readonly type: ActorType;
  readonly id?: string;
  /** The user's email when the entry was recorded, if the trail knows it. */
  readonly email?: string;
}

export interface Target {
  readonly type: string;
  readonly id: string;
}

export interface FieldChange {
  readonly field: string;
  readonly before?: unknown;
  readonly after?: unknown;
  /** A secret field: that it changed is recorded, never its value. */
  readonly redacted?: boolean;
}

/** What the recorder derives from one event, before it takes its place in the chain. */
export interface EntryDraft {
  readonly eventId: string;
  readonly occurredAt: Date;
  readonly actor: Actor;
  readonly action: string;
  readonly target: Target;
  readonly changes: readonly FieldChange[];
  readonly traceId?: string;
  readonly clientIp?: string;
  readonly userAgent?: string;
}

export interface AuditEntry extends EntryDraft {
  readonly id: string;
  /** 1, 2, ...: the position in the chain (recording order). */
  readonly seq: number;
  readonly recordedAt: Date;
  readonly prevHash: string;
  readonly hash: string;
}

/** Fields whose values never enter the trail. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['password', 'passwordHash', 'token', 'refreshToken', 'sealedToken', 'tokenHash', 'link', 'clientSecret', 'secretHash']);

export interface AuditFilter {
  readonly actorId?: string;
  readonly targetId?: string;
  /** A prefix of the action. */
  readonly action?: string;
  readonly from?: Date;
  readonly to?: Date;
}

/**
 * A position in the trail's order, newest first: when it happened (microseconds since the epoch,
 * exact, as a decimal string) and, among entries of the same instant, its seq.
 */
export interface AuditPosition {
  readonly occurredUs: string;
  readonly seq: number;
}

export interface AuditPage {
  /** Newest first (by when it happened, then by seq). */
  readonly items: readonly AuditEntry[];
  /** The position to continue below; undefined on the last page. */
  readonly next?: AuditPosition;
}

export interface ChainReport {
  readonly ok: boolean;
  /** Entries checked. */
  readonly checked: number;
  /** The first retained entry (retention removes older ones). */
  readonly firstSeq: number;
  /** The first entry found altered, missing or out of place. */
  readonly brokenAtSeq?: number;
  /** What is wrong, naming the entries and the checkpoint that show it. */
  readonly reason?: string;
  /** The newest signed checkpoint the chain was held against; absent before the first. */
  readonly checkpoint?: { readonly seq: number; readonly hash: string; readonly signedAt: Date };
  /** Signed checkpoints found to match their entry (or the anchor). */
  readonly checkpointsChecked: number;
  /** Checkpoints not taken into account: signed by another key, or not validly signed. */
  readonly checkpointsRejected: number;
  /** Entries after the newest checkpoint: no signature covers them yet. */
  readonly unsignedEntries: number;
}
