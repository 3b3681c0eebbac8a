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
export const AUDITED_SUBJECTS = ['directory.>', 'identity.>', 'commerce.>'] as const;

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

/** The entry an event stands for (the projection updated on the way). */
export async function draftOf(e: IncomingEvent, p: Projection): Promise<EntryDraft> {
  const described: Described = KNOWN.has(e.subject)
    ? await describe(e.subject as EventSubject, e.data, p)
    : // A subject newer than this build: recorded by name, nothing read from it.
      { action: e.subject, target: { type: 'unknown', id: '' }, changes: [] };
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

export function createRecorder(uow: AuditUnitOfWork): EventHandler {
  return (e) =>
    uow.run(async ({ log, projection }) => {
      if (await log.has(e.id)) return;
      await log.append(await draftOf(e, projection));
    });
}
