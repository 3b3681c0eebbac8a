/**
 * The recorder: one audit entry per event of the other contexts, idempotent on the event id
 * (a redelivered event finds its entry and is acknowledged). What an entry says comes from the
 * event (./describe.ts: action, target, before/after of each changed field), the trail's
 * projection (who an actor is) and the request context the publisher attached (headers: actor,
 * client IP, user agent; the trace id from traceparent). Secret fields are recorded as redacted,
 * never with a value.
 */
import { type EventSubject, SUBJECTS } from '@iam/contracts';
import type { EventHandler, IncomingEvent } from '@iam/platform/bus';
// The headers a publisher's outbox sets from the request that caused the event (lower case).
import { EVENT_CONTEXT_HEADERS } from '@iam/platform/core';
import type { Actor, EntryDraft } from '../domain/entry';
import type { AuditUnitOfWork, Projection } from '../domain/ports';
import { type Described, describe } from './describe';

/** Every subject the other contexts publish. */
export const AUDITED_SUBJECTS = ['directory.>', 'identity.>', 'commerce.>', 'notification.>'] as const;

const KNOWN = new Set<string>(Object.values(SUBJECTS));

function header(e: IncomingEvent, name: string): string | undefined {
  for (const [k, v] of Object.entries(e.headers ?? {})) if (k.toLowerCase() === name && v) return v;
  return undefined;
}

/** 00-<trace id>-<span id>-<flags> → the trace id. */
function traceIdOf(traceparent: string | undefined): string | undefined {
  const m = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '');
  return m?.[1];
}

/** The entry an event stands for (the projection updated on the way); null for an event folded into its job's entry. */
export async function draftOf(e: IncomingEvent, p: Projection): Promise<EntryDraft | null> {
  const described: Described = KNOWN.has(e.subject)
    ? await describe(e.subject as EventSubject, e.data, p)
    : // A subject newer than this build: recorded by name, nothing read from it.
      { action: e.subject, target: { type: 'unknown', id: '' }, changes: [] };
  if (described.folded) return null;
  const clientIp = header(e, EVENT_CONTEXT_HEADERS.clientIp);
  const userAgent = header(e, EVENT_CONTEXT_HEADERS.userAgent);
  const sub = header(e, EVENT_CONTEXT_HEADERS.actor);
  let actor: Actor;
  if (sub) {
    const known = await p.user(sub);
    actor = { type: 'user', id: sub, ...(known ? { email: known.email } : {}) };
  } else if (described.actor) {
    actor = described.actor;
  } else {
    // No caller named: a request without a token (it has a client IP) or the system's own work.
    actor = clientIp ? { type: 'anonymous' } : { type: 'system' };
  }
  return {
    eventId: e.id,
    occurredAt: e.occurredAt,
    actor,
    action: described.action,
    target: described.target,
    changes: described.changes,
    traceId: traceIdOf(e.traceparent),
    clientIp,
    userAgent: userAgent?.slice(0, 512),
  };
}

/** Events recorded in one transaction at most (the consumers' maxAckPending bounds it too). */
export const RECORD_BATCH_MAX = 500;

/**
 * The recorder's handler, committing in groups: the first event starts a transaction at once;
 * events that arrive while it runs wait for the next one, which records all of them in arrival
 * (stream) order with one lock of the chain, one read of which ids are recorded already and one
 * multi-row insert. Under load a transaction records hundreds; alone, an event waits for nothing.
 * A group that fails is recorded again one event per transaction, so one bad event fails alone
 * (its redelivery and dead letter as before) and the others are not held.
 */
export function createRecorder(uow: AuditUnitOfWork, opts: { maxBatch?: number } = {}): EventHandler {
  const maxBatch = opts.maxBatch ?? RECORD_BATCH_MAX;
  const queue: Array<{ event: IncomingEvent; done: (err?: unknown) => void }> = [];
  let draining = false;

  const recordAll = (events: readonly IncomingEvent[]) =>
    uow.run(async ({ log, projection }) => {
      const seen = await log.recorded(events.map((e) => e.id));
      const drafts: EntryDraft[] = [];
      for (const e of events) {
        if (seen.has(e.id)) continue;
        seen.add(e.id);
        const draft = await draftOf(e, projection);
        if (draft) drafts.push(draft);
      }
      await log.appendAll(drafts);
    });

  const drain = async () => {
    draining = true;
    while (queue.length > 0) {
      const group = queue.splice(0, maxBatch);
      try {
        await recordAll(group.map((g) => g.event));
        for (const g of group) g.done();
      } catch (err) {
        if (group.length === 1) {
          group[0]!.done(err);
          continue;
        }
        for (const g of group) await recordAll([g.event]).then(() => g.done(), g.done);
      }
    }
    draining = false;
  };

  return (event) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ event, done: (err) => (err === undefined ? resolve() : reject(err instanceof Error ? err : new Error('recording failed'))) });
      if (!draining) void drain();
    });
}
