/**
 * What one event says for the trail: the action, its target and the field-level changes, each
 * with its before and after value (secret fields only as redacted). Updates carry the record as
 * it was before them (`before` in the directory's and commerce's events); an update published
 * before the events did (no `before`) falls back to the trail's projection for the fields it
 * knows, as the trail used to. Creations list the fields that have a value; deletions what was.
 */
import { type EventSubject, SUBJECTS, decodeEvent, type eventsV1 } from '@iam/contracts';
import type { Actor, FieldChange, Target } from '../domain/entry';
import { SECRET_FIELDS } from '../domain/entry';
import type { KnownUser, Projection } from '../domain/ports';

export interface Described {
  action: string;
  target: Target;
  changes: FieldChange[];
  /** The actor when the event itself names it (an order's customer, a login's user). */
  actor?: Actor;
  /**
   * Part of a job recorded once as a whole (a user created by a bulk import: the job's
   * directory.users.imported is its entry); the projection is updated, no entry is written.
   */
  folded?: true;
}

type View = Record<string, unknown>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** before/after of the named fields; secret ones redacted; unchanged known values left out. */
function changesOf(fields: readonly string[], before: View | undefined, after: View | undefined): FieldChange[] {
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

/** A new record: each field that has a value (no empty description, no absent phone). */
const created = (fields: readonly string[], after: View): FieldChange[] =>
  changesOf(
    fields.filter((f) => after[f] !== undefined && after[f] !== null && after[f] !== ''),
    undefined,
    after,
  );

const MFA_ACTIONS = {
  [SUBJECTS.mfaEnrolled]: 'mfa.enrolled',
  [SUBJECTS.mfaRemoved]: 'mfa.removed',
  [SUBJECTS.mfaVerified]: 'mfa.verified',
  [SUBJECTS.mfaFailed]: 'mfa.failed',
  [SUBJECTS.recoveryCodeUsed]: 'mfa.recovery_code.used',
  [SUBJECTS.mfaReset]: 'mfa.reset',
} as const;

const USER_FIELDS = ['email', 'firstName', 'lastName', 'phone', 'emailVerified', 'roles'] as const;

interface UserFields {
  email: string;
  firstName: string;
  lastName: string;
  roles: readonly string[];
  phone?: number;
  emailVerified?: boolean;
}

/** `full`: phone and emailVerified are known (an event of this contract; the projection has neither). */
function userView(u: UserFields | undefined, full: boolean): View | undefined {
  if (!u) return undefined;
  const view: View = { email: u.email, firstName: u.firstName, lastName: u.lastName, roles: [...u.roles].sort() };
  if (full) Object.assign(view, { phone: u.phone ?? null, emailVerified: u.emailVerified ?? false });
  return view;
}

const NAMED_FIELDS = ['name', 'description'] as const;

const PRODUCT_FIELDS = ['sku', 'name', 'description', 'priceMinor', 'currency', 'status', 'onHand'] as const;
const productView = (p: eventsV1.ProductState | undefined): View | undefined => (p ? { ...p } : undefined);

const PRODUCT_ACTIONS: Partial<Record<EventSubject, string>> = {
  [SUBJECTS.productCreated]: 'product.created',
  [SUBJECTS.productUpdated]: 'product.updated',
  [SUBJECTS.productArchived]: 'product.archived',
  [SUBJECTS.productReactivated]: 'product.reactivated',
  [SUBJECTS.productStockAdjusted]: 'product.stock.adjusted',
};

async function describeUser(subject: typeof SUBJECTS.userCreated | typeof SUBJECTS.userUpdated | typeof SUBJECTS.userDeleted, data: Uint8Array, p: Projection): Promise<Described> {
  const e = decodeEvent(subject, data);
  const known = await p.user(e.userId);
  const current: KnownUser = { id: e.userId, email: e.email, firstName: e.firstName, lastName: e.lastName, roles: e.roles };
  await p.saveUser(current);
  const target = { type: 'user', id: e.userId };
  if (subject === SUBJECTS.userCreated) return { action: 'user.created', target, changes: created(USER_FIELDS, userView(e, true)!), ...(e.importJobId ? { folded: true as const } : {}) };
  if (subject === SUBJECTS.userDeleted) return { action: 'user.deleted', target, changes: changesOf(['email'], userView(e, false), undefined) };
  const full = e.before !== undefined;
  const fields = e.changedFields.length > 0 ? e.changedFields : [...USER_FIELDS];
  const action = e.passwordResetId ? 'password.reset.completed' : fields.includes('roles') ? 'user.roles.changed' : 'user.updated';
  return { action, target, changes: changesOf(fields, userView(e.before ?? known, full), userView(e, full)) };
}

async function describeNamed(kind: 'role' | 'permission', subject: EventSubject, data: Uint8Array, p: Projection): Promise<Described> {
  const e = decodeEvent(subject, data) as { name: string; description: string; changedFields: string[]; before?: View; roleId?: string; permissionId?: string };
  const id = (kind === 'role' ? e.roleId : e.permissionId) ?? '';
  const projected = await p.name(kind, id);
  await p.saveName(kind, id, e.name);
  const verb = subject.slice(subject.lastIndexOf('.') + 1);
  const target = { type: kind, id };
  const now = { name: e.name, description: e.description };
  if (verb === 'created') return { action: `${kind}.created`, target, changes: created(NAMED_FIELDS, now) };
  if (verb === 'deleted') return { action: `${kind}.deleted`, target, changes: changesOf(NAMED_FIELDS.filter((f) => now[f] !== ''), now, undefined) };
  // Without `before` (an older event) only the name is known, from the projection.
  const [before, after] = e.before ? [e.before, now] : [{ name: projected }, { name: e.name }];
  return { action: `${kind}.updated`, target, changes: changesOf(e.changedFields, before, after) };
}

function describeLink(subject: typeof SUBJECTS.rolePermissionCreated | typeof SUBJECTS.rolePermissionUpdated | typeof SUBJECTS.rolePermissionDeleted, data: Uint8Array): Described {
  const e = decodeEvent(subject, data);
  const permission = { id: e.permissionId, name: e.permissionName };
  const target = { type: 'role', id: e.roleId };
  if (subject === SUBJECTS.rolePermissionCreated) return { action: 'role.permission.granted', target, changes: [{ field: 'permission', after: permission }] };
  if (subject === SUBJECTS.rolePermissionDeleted) return { action: 'role.permission.revoked', target, changes: [{ field: 'permission', before: permission }] };
  const b = e.before;
  const before = b ? { role: { id: b.roleId, name: b.roleName }, permission: { id: b.permissionId, name: b.permissionName } } : undefined;
  const after = { role: { id: e.roleId, name: e.roleName }, permission };
  return { action: 'role.permission.changed', target, changes: changesOf(['role', 'permission'], before, after).filter((c) => c.field !== 'role' || b) };
}

function describeProduct(subject: EventSubject, data: Uint8Array): Described {
  const e = decodeEvent(subject as typeof SUBJECTS.productUpdated, data);
  const target = { type: 'product', id: e.productId };
  const action = PRODUCT_ACTIONS[subject]!;
  if (!e.before) return { action, target, changes: created(PRODUCT_FIELDS, productView(e.after) ?? {}) };
  return { action, target, changes: changesOf(e.changedFields, productView(e.before), productView(e.after)) };
}

async function describeOrder(subject: typeof SUBJECTS.orderPlaced | typeof SUBJECTS.orderCancelled, data: Uint8Array, p: Projection): Promise<Described> {
  const e = decodeEvent(subject, data);
  const known = await p.user(e.customerId);
  const email = e.customerEmail || known?.email;
  // Only a placed order can be cancelled.
  const placed = subject === SUBJECTS.orderPlaced;
  const lines = e.lines.map((l) => ({ sku: l.sku, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor }));
  const order = { total: { minor: e.totalMinor, currency: e.currency }, lines };
  return {
    action: placed ? 'order.placed' : 'order.cancelled',
    target: { type: 'order', id: e.orderId },
    actor: { type: 'user', id: e.customerId, ...(email ? { email } : {}) },
    changes: changesOf(['status', 'total', 'lines'], placed ? undefined : { status: 'placed' }, { status: placed ? 'placed' : 'cancelled', ...order }),
  };
}

const CLIENT_FIELDS = [
  'name',
  'type',
  'redirectUris',
  'postLogoutRedirectUris',
  'grantTypes',
  'roles',
  'requirePar',
  'dpopBound',
  'apiPermissions',
  'idTokenSignedResponseAlg',
  'userinfoSignedResponseAlg',
  'resourceServer',
] as const;
const CLIENT_ACTIONS: Partial<Record<EventSubject, string>> = {
  [SUBJECTS.clientCreated]: 'client.created',
  [SUBJECTS.clientUpdated]: 'client.updated',
  [SUBJECTS.clientDeleted]: 'client.deleted',
  [SUBJECTS.clientSecretRotated]: 'client.secret.rotated',
};
// A userinfo answer that is not signed is "" on the wire: null in the trail, as the clients API shows it.
const clientView = (c: eventsV1.ClientState | undefined): View | undefined =>
  c ? { ...c, roles: [...c.roles].sort(), userinfoSignedResponseAlg: c.userinfoSignedResponseAlg || null } : undefined;

/** An OAuth client's change: its settings, never its secret (a secret change is a redacted field). */
function describeClient(subject: typeof SUBJECTS.clientCreated, data: Uint8Array): Described {
  const e = decodeEvent(subject, data);
  const action = CLIENT_ACTIONS[subject as EventSubject]!;
  const target = { type: 'client', id: e.clientId };
  const after = clientView(e.after) ?? {};
  if (action === 'client.created') return { action, target, changes: created(CLIENT_FIELDS, after) };
  if (action === 'client.deleted') return { action, target, changes: changesOf(['name'], after, undefined) };
  // A change that could let a new party receive the client's codes ended the users' grants: how many.
  const revoked: FieldChange[] = e.grantsRevoked ? [{ field: 'grantsRevoked', after: e.grantsRevokedCount }] : [];
  if (action === 'client.secret.rotated') return { action, target, changes: [{ field: 'clientSecret', redacted: true }, ...revoked] };
  return { action, target, changes: [...changesOf(e.changedFields, clientView(e.before), after), ...revoked] };
}

const WEBHOOK_FIELDS = ['url', 'description', 'eventTypes', 'enabled', 'ed25519'] as const;
const WEBHOOK_ACTIONS: Partial<Record<EventSubject, string>> = {
  [SUBJECTS.webhookCreated]: 'webhook.created',
  [SUBJECTS.webhookUpdated]: 'webhook.updated',
  [SUBJECTS.webhookDeleted]: 'webhook.deleted',
  [SUBJECTS.webhookSecretRotated]: 'webhook.secret.rotated',
  [SUBJECTS.webhookDisabled]: 'webhook.disabled',
};
const webhookView = (w: eventsV1.WebhookEndpointState | undefined): View | undefined => (w ? { ...w, eventTypes: [...w.eventTypes].sort() } : undefined);

/** An outgoing webhook endpoint's change (notification): its settings, never its secret. */
function describeWebhook(subject: EventSubject, data: Uint8Array): Described {
  const target = (id: string) => ({ type: 'webhook', id });
  if (subject === SUBJECTS.webhookUrlRefused) {
    // The SSRF guard refused an address: which, where, why (the request failed, or the attempt).
    const e = decodeEvent(SUBJECTS.webhookUrlRefused, data);
    return { action: 'webhook.url.refused', target: target(e.endpointId), changes: created(['url', 'stage', 'reason', 'address'], { url: e.url, stage: e.stage, reason: e.reason, address: e.address }) };
  }
  if (subject === SUBJECTS.webhookReplayed) {
    const e = decodeEvent(SUBJECTS.webhookReplayed, data);
    const view: View = { message: e.messageId, since: e.since?.toISOString(), until: e.until?.toISOString(), count: e.count };
    return { action: 'webhook.messages.replayed', target: target(e.endpointId), changes: created(['message', 'since', 'until', 'count'], view) };
  }
  if (subject === SUBJECTS.webhookTested) {
    const e = decodeEvent(SUBJECTS.webhookTested, data);
    return { action: 'webhook.tested', target: target(e.endpointId), changes: changesOf(['message'], undefined, { message: e.messageId }) };
  }
  const e = decodeEvent(subject as typeof SUBJECTS.webhookCreated, data);
  const action = WEBHOOK_ACTIONS[subject]!;
  const after = webhookView(e.after) ?? {};
  if (action === 'webhook.created') return { action, target: target(e.endpointId), changes: created(WEBHOOK_FIELDS, after) };
  if (action === 'webhook.deleted') return { action, target: target(e.endpointId), changes: changesOf(['url'], after, undefined) };
  if (action === 'webhook.secret.rotated') {
    const until = e.previousSecretExpiresAt?.toISOString();
    return { action, target: target(e.endpointId), changes: [{ field: 'secret', redacted: true }, ...(until ? [{ field: 'previousSecretExpiresAt', after: until }] : [])] };
  }
  // updated, or disabled by the platform (410 Gone, or failing for days): with the reason.
  const changes = changesOf(e.changedFields, webhookView(e.before), after);
  return { action, target: target(e.endpointId), changes: e.reason ? [...changes, { field: 'reason', after: e.reason }] : changes };
}

/** What an event of a subject this build knows says (the projection updated on the way). */
export async function describe(subject: EventSubject, data: Uint8Array, p: Projection): Promise<Described> {
  switch (subject) {
    case SUBJECTS.userCreated:
    case SUBJECTS.userUpdated:
    case SUBJECTS.userDeleted:
      return describeUser(subject, data, p);
    case SUBJECTS.roleCreated:
    case SUBJECTS.roleUpdated:
    case SUBJECTS.roleDeleted:
      return describeNamed('role', subject, data, p);
    case SUBJECTS.permissionCreated:
    case SUBJECTS.permissionUpdated:
    case SUBJECTS.permissionDeleted:
      return describeNamed('permission', subject, data, p);
    case SUBJECTS.rolePermissionCreated:
    case SUBJECTS.rolePermissionUpdated:
    case SUBJECTS.rolePermissionDeleted:
      return describeLink(subject, data);
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
      // From the OpenID provider: the client whose grant was revoked (it does not count the tokens).
      if (e.clientId) return { action: 'refresh.reuse_detected', target: { type: 'user', id: e.userId }, changes: changesOf(['client', 'grant'], undefined, { client: e.clientId, grant: e.familyId }) };
      return { action: 'refresh.reuse_detected', target: { type: 'user', id: e.userId }, changes: changesOf(['revokedTokens'], undefined, { revokedTokens: e.revoked }) };
    }
    case SUBJECTS.mfaEnrolled:
    case SUBJECTS.mfaRemoved:
    case SUBJECTS.mfaVerified:
    case SUBJECTS.mfaFailed:
    case SUBJECTS.recoveryCodeUsed:
    case SUBJECTS.mfaReset: {
      // Never a secret, a code or a credential id: the factor's kind and counts only.
      const e = decodeEvent(subject, data);
      const view: View = { factor: e.factor || undefined };
      if (subject === SUBJECTS.mfaFailed) Object.assign(view, { failures: e.failures, reason: e.reason });
      if (subject === SUBJECTS.mfaReset) view.reason = e.reason;
      // Passkeys: a hash of the credential id (never the id) and the name its owner gave it.
      if (e.credential) Object.assign(view, { credential: e.credential, name: e.name || undefined, ...(e.reason ? { reason: e.reason } : {}) });
      if (subject === SUBJECTS.recoveryCodeUsed || (subject === SUBJECTS.mfaEnrolled && e.factor === 'recovery_codes')) view.recoveryCodesLeft = e.recoveryCodesLeft;
      const fields = Object.keys(view).filter((k) => view[k] !== undefined && view[k] !== '');
      return { action: MFA_ACTIONS[subject], target: { type: 'user', id: e.userId }, changes: changesOf(fields, undefined, view) };
    }
    case SUBJECTS.factorAdded: {
      // The notice of a sign-in method added (mailed to the user): its kind and name, never the address.
      const e = decodeEvent(subject, data);
      const view: View = { kind: e.method?.kind, name: e.method?.name || undefined };
      const fields = Object.keys(view).filter((k) => view[k] !== undefined && view[k] !== '');
      return { action: 'factor.added', target: { type: 'user', id: e.userId }, changes: changesOf(fields, undefined, view) };
    }
    case SUBJECTS.sessionEnded: {
      const e = decodeEvent(subject, data);
      return { action: 'session.ended', target: { type: 'user', id: e.userId }, changes: changesOf(['session', 'tokensRevoked'], undefined, { session: e.sessionId, tokensRevoked: e.tokensRevoked }) };
    }
    case SUBJECTS.accountUnlocked: {
      const e = decodeEvent(subject, data);
      return { action: 'account.unlocked', target: { type: 'user', id: e.userId }, changes: [] };
    }
    case SUBJECTS.orderPlaced:
    case SUBJECTS.orderCancelled:
      return describeOrder(subject, data, p);
    case SUBJECTS.clientCreated:
    case SUBJECTS.clientUpdated:
    case SUBJECTS.clientDeleted:
    case SUBJECTS.clientSecretRotated:
      return describeClient(subject as typeof SUBJECTS.clientCreated, data);
    case SUBJECTS.consentGranted: {
      // The user allowed the client these scopes (the actor comes from the event's request context).
      const e = decodeEvent(subject, data);
      const known = await p.user(e.userId);
      return {
        action: 'consent.granted',
        target: { type: 'client', id: e.clientId },
        actor: { type: 'user', id: e.userId, ...(known ? { email: known.email } : {}) },
        changes: changesOf(['scopes'], undefined, { scopes: [...e.scopes].sort() }),
      };
    }
    case SUBJECTS.clientTokensIssued: {
      // A window's tally (about a minute), never a token: how many, of which grant types.
      const e = decodeEvent(subject, data);
      const view: View = { count: e.count, byGrantType: { ...e.byGrantType }, windowStart: e.windowStart?.toISOString(), windowEnd: e.windowEnd?.toISOString() };
      return { action: 'client.tokens_issued', target: { type: 'client', id: e.clientId }, changes: changesOf(['count', 'byGrantType', 'windowStart', 'windowEnd'], undefined, view) };
    }
    case SUBJECTS.productCreated:
    case SUBJECTS.productUpdated:
    case SUBJECTS.productArchived:
    case SUBJECTS.productReactivated:
    case SUBJECTS.productStockAdjusted:
      return describeProduct(subject, data);
    case SUBJECTS.webhookCreated:
    case SUBJECTS.webhookUpdated:
    case SUBJECTS.webhookDeleted:
    case SUBJECTS.webhookSecretRotated:
    case SUBJECTS.webhookDisabled:
    case SUBJECTS.webhookUrlRefused:
    case SUBJECTS.webhookReplayed:
    case SUBJECTS.webhookTested:
      return describeWebhook(subject, data);
    case SUBJECTS.usersImported: {
      // A bulk import job, once, with its counts (its users' user.created are folded into it).
      const e = decodeEvent(subject, data);
      return { action: 'users.imported', target: { type: 'import', id: e.jobId }, changes: changesOf(['created', 'skipped', 'refused', 'source'], undefined, { created: e.created, skipped: e.skipped, refused: e.refused, source: e.source }) };
    }
    default:
      return { action: subject, target: { type: 'unknown', id: '' }, changes: [] };
  }
}
