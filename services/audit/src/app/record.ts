/**
 * The recorder: one audit entry per event of the other contexts, idempotent on the event id
 * (a redelivered event finds its entry and is acknowledged). What an entry says comes from the
 * event, the trail's projection (what a field was before, who an actor is) and the request
 * context the publisher attached (headers: actor, client IP, user agent; the trace id from
 * traceparent). Secret fields are recorded as redacted, never with a value.
 */
import { type EventSubject, SUBJECTS, decodeEvent } from '@iam/contracts';
import type { EventHandler, IncomingEvent } from '@iam/platform/bus';
import type { Actor, EntryDraft, FieldChange, Target } from '../domain/entry';
import { SECRET_FIELDS } from '../domain/entry';
import type { AuditUnitOfWork, KnownUser, Projection } from '../domain/ports';

/** Every subject the other contexts publish. */
export const AUDITED_SUBJECTS = ['directory.>', 'identity.>', 'commerce.>'] as const;

/** Headers a publisher sets from the request that caused the event (lower-case; NATS headers are case-insensitive). */
export const CONTEXT_HEADERS = { actor: 'iam-actor-sub', clientIp: 'iam-client-ip', userAgent: 'iam-user-agent' } as const;

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

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** before/after of the named fields; secret ones redacted; unchanged known values left out. */
function changesOf(fields: readonly string[], before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): FieldChange[] {
  const out: FieldChange[] = [];
  for (const field of fields) {
    if (SECRET_FIELDS.has(field)) {
      out.push({ field, redacted: true });
      continue;
    }
    const b = before?.[field];
    const a = after?.[field];
    if (b !== undefined && a !== undefined && same(a, b)) continue;
    out.push({ field, ...(b !== undefined ? { before: b } : {}), ...(a !== undefined ? { after: a } : {}) });
  }
  return out;
}

const USER_FIELDS = ['email', 'firstName', 'lastName', 'roles'] as const;
const userView = (u: KnownUser | undefined) => (u ? { email: u.email, firstName: u.firstName, lastName: u.lastName, roles: [...u.roles].sort() } : undefined);

interface Described {
  action: string;
  target: Target;
  changes: FieldChange[];
  /** The actor when the event itself names it (an order's customer). */
  actor?: Actor;
}

async function describe(subject: EventSubject, data: Uint8Array, p: Projection): Promise<Described> {
  switch (subject) {
    case SUBJECTS.userCreated:
    case SUBJECTS.userUpdated:
    case SUBJECTS.userDeleted: {
      const e = decodeEvent(subject, data);
      const before = await p.user(e.userId);
      const after: KnownUser = { id: e.userId, email: e.email, firstName: e.firstName, lastName: e.lastName, roles: e.roles };
      await p.saveUser(after);
      const target = { type: 'user', id: e.userId };
      if (subject === SUBJECTS.userCreated) return { action: 'user.created', target, changes: changesOf(USER_FIELDS, undefined, userView(after)) };
      if (subject === SUBJECTS.userDeleted) return { action: 'user.deleted', target, changes: changesOf(['email'], userView(before ?? after), undefined) };
      const fields = e.changedFields.length > 0 ? e.changedFields : [...USER_FIELDS];
      const action = e.passwordResetId ? 'password.reset.completed' : fields.includes('roles') ? 'user.roles.changed' : 'user.updated';
      return { action, target, changes: changesOf(fields, userView(before), userView(after)) };
    }
    case SUBJECTS.roleCreated:
    case SUBJECTS.roleUpdated:
    case SUBJECTS.roleDeleted:
    case SUBJECTS.permissionCreated:
    case SUBJECTS.permissionUpdated:
    case SUBJECTS.permissionDeleted: {
      const kind = subject.startsWith('directory.role.') ? 'role' : 'permission';
      const e = decodeEvent(subject, data) as { name: string; changedFields: string[]; roleId?: string; permissionId?: string };
      const id = (kind === 'role' ? e.roleId : e.permissionId) ?? '';
      const before = await p.name(kind, id);
      await p.saveName(kind, id, e.name);
      const verb = subject.slice(subject.lastIndexOf('.') + 1);
      const target = { type: kind, id };
      if (verb === 'created') return { action: `${kind}.created`, target, changes: changesOf(['name'], undefined, { name: e.name }) };
      if (verb === 'deleted') return { action: `${kind}.deleted`, target, changes: changesOf(['name'], { name: before ?? e.name }, undefined) };
      return { action: `${kind}.updated`, target, changes: changesOf(e.changedFields, { name: before }, { name: e.name }) };
    }
    case SUBJECTS.rolePermissionCreated:
    case SUBJECTS.rolePermissionUpdated:
    case SUBJECTS.rolePermissionDeleted: {
      const e = decodeEvent(subject, data);
      const permission = { id: e.permissionId, name: e.permissionName };
      const target = { type: 'role', id: e.roleId };
      const link = { field: 'permission' };
      if (subject === SUBJECTS.rolePermissionCreated) return { action: 'role.permission.granted', target, changes: [{ ...link, after: permission }] };
      if (subject === SUBJECTS.rolePermissionDeleted) return { action: 'role.permission.revoked', target, changes: [{ ...link, before: permission }] };
      return { action: 'role.permission.changed', target, changes: [{ ...link, after: permission }] };
    }
    case SUBJECTS.tokenRevoked: {
      const e = decodeEvent(subject, data);
      return { action: 'token.revoked', target: { type: 'user', id: e.userId }, changes: [] };
    }
    case SUBJECTS.subjectRevoked: {
      const e = decodeEvent(subject, data);
      return { action: 'sessions.revoked', target: { type: 'user', id: e.userId }, changes: [] };
    }
    case SUBJECTS.passwordResetRequested:
    case SUBJECTS.emailVerificationRequested: {
      // The sealed token stays out: only who it was for.
      const e = decodeEvent(subject, data);
      const action = subject === SUBJECTS.passwordResetRequested ? 'password.reset.requested' : 'email.verification.requested';
      return { action, target: { type: 'user', id: e.userId }, changes: [] };
    }
    case SUBJECTS.passwordChanged: {
      const e = decodeEvent(subject, data);
      return { action: 'password.changed', target: { type: 'user', id: e.userId }, changes: [{ field: 'password', redacted: true }] };
    }
    case SUBJECTS.loginSucceeded:
    case SUBJECTS.loginFailed:
    case SUBJECTS.accountLocked: {
      // Never the email or password tried; an attempt against no account names no user.
      const e = decodeEvent(subject, data);
      const target = e.userId ? { type: 'user', id: e.userId } : { type: 'account', id: '' };
      if (subject === SUBJECTS.loginSucceeded) {
        const known = await p.user(e.userId);
        return { action: 'login.succeeded', target, actor: { type: 'user', id: e.userId, ...(known ? { email: known.email } : {}) }, changes: [] };
      }
      const changes = changesOf(e.reason ? ['failures', 'reason'] : ['failures'], undefined, { failures: e.failures, reason: e.reason });
      return { action: subject === SUBJECTS.loginFailed ? 'login.failed' : 'account.locked', target, changes };
    }
    case SUBJECTS.refreshReuseDetected: {
      const e = decodeEvent(subject, data);
      return { action: 'refresh.reuse_detected', target: { type: 'user', id: e.userId }, changes: changesOf(['revokedTokens'], undefined, { revokedTokens: e.revoked }) };
    }
    case SUBJECTS.orderPlaced:
    case SUBJECTS.orderCancelled: {
      const e = decodeEvent(subject, data);
      const known = await p.user(e.customerId);
      const email = e.customerEmail || known?.email;
      const status = subject === SUBJECTS.orderPlaced ? 'placed' : 'cancelled';
      const lines = e.lines.map((l) => ({ sku: l.sku, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor }));
      return {
        action: `order.${status}`,
        target: { type: 'order', id: e.orderId },
        actor: { type: 'user', id: e.customerId, ...(email ? { email } : {}) },
        changes: changesOf(['status', 'total', 'lines'], undefined, { status, total: { minor: e.totalMinor, currency: e.currency }, lines }),
      };
    }
    default:
      return { action: subject, target: { type: 'unknown', id: '' }, changes: [] };
  }
}

/** The entry an event stands for (the projection updated on the way). */
export async function draftOf(e: IncomingEvent, p: Projection): Promise<EntryDraft> {
  const described: Described = KNOWN.has(e.subject)
    ? await describe(e.subject as EventSubject, e.data, p)
    : // A subject newer than this build: recorded by name, nothing read from it.
      { action: e.subject, target: { type: 'unknown', id: '' }, changes: [] };
  const clientIp = header(e, CONTEXT_HEADERS.clientIp);
  const userAgent = header(e, CONTEXT_HEADERS.userAgent);
  const sub = header(e, CONTEXT_HEADERS.actor);
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
