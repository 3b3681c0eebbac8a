/**
 * What identity's federation events say for the trail (issue #40): an upstream identity provider's
 * settings changed (never its client secret: a change of it is a redacted field), an upstream
 * identity linked to or unlinked from a user, and an upstream sign-in refused (with its reason).
 */
import { type EventSubject, SUBJECTS, decodeEvent, type eventsV1 } from '@iam/contracts';
import type { Actor, FieldChange, Target } from '../domain/entry';
import { SECRET_FIELDS } from '../domain/entry';

export interface FederationDescribed {
  action: string;
  target: Target;
  changes: FieldChange[];
  actor?: Actor;
}

type View = Record<string, unknown>;

const FIELDS = ['kind', 'name', 'displayName', 'discoveryUrl', 'clientId', 'scopes', 'claimMapping', 'trustEmailVerified', 'trustUpstreamMfa', 'allowSignUp', 'linking', 'defaultRoles', 'iconUrl', 'enabled'] as const;

function changesOf(fields: readonly string[], before: View | undefined, after: View | undefined): FieldChange[] {
  const out: FieldChange[] = [];
  for (const field of fields) {
    if (SECRET_FIELDS.has(field)) {
      out.push({ field, redacted: true });
      continue;
    }
    const b = before?.[field];
    const a = after?.[field];
    if (b !== undefined && a !== undefined && JSON.stringify(a) === JSON.stringify(b)) continue;
    out.push({ field, ...(b !== undefined ? { before: b } : {}), ...(a !== undefined ? { after: a } : {}) });
  }
  return out;
}

const providerView = (s: eventsV1.IdentityProviderState | undefined): View | undefined => {
  if (!s) return undefined;
  let claimMapping: unknown = s.claimMapping;
  try {
    claimMapping = JSON.parse(s.claimMapping);
  } catch {
    // kept as the text it is
  }
  return { ...s, discoveryUrl: s.discoveryUrl || null, claimMapping, defaultRoles: [...s.defaultRoles].sort() };
};

export const FEDERATION_SUBJECTS: readonly EventSubject[] = [
  SUBJECTS.identityProviderCreated,
  SUBJECTS.identityProviderUpdated,
  SUBJECTS.identityProviderDeleted,
  SUBJECTS.federatedIdentityLinked,
  SUBJECTS.federatedIdentityUnlinked,
  SUBJECTS.upstreamSignInRefused,
];

export function describeFederation(subject: EventSubject, data: Uint8Array): FederationDescribed {
  if (subject === SUBJECTS.federatedIdentityLinked || subject === SUBJECTS.federatedIdentityUnlinked) {
    const e = decodeEvent(subject, data);
    const view: View = { provider: e.providerName, issuer: e.issuer, subject: e.subject, how: e.how };
    return {
      action: subject === SUBJECTS.federatedIdentityLinked ? 'identity.linked' : 'identity.unlinked',
      target: { type: 'user', id: e.userId },
      changes: changesOf(['provider', 'issuer', 'subject', 'how'], subject === SUBJECTS.federatedIdentityLinked ? undefined : view, subject === SUBJECTS.federatedIdentityLinked ? view : undefined),
      ...(e.actorId ? { actor: { type: 'user' as const, id: e.actorId } } : {}),
    };
  }
  if (subject === SUBJECTS.upstreamSignInRefused) {
    const e = decodeEvent(subject, data);
    const view: View = { provider: e.providerName, reason: e.reason, ...(e.ip ? { ip: e.ip } : {}) };
    return {
      action: 'federation.refused',
      target: e.userId ? { type: 'user', id: e.userId } : { type: 'identity-provider', id: e.providerId },
      changes: changesOf(Object.keys(view), undefined, view),
    };
  }
  const e = decodeEvent(subject as typeof SUBJECTS.identityProviderCreated, data);
  const target = { type: 'identity-provider', id: e.providerId };
  const after = providerView(e.after) ?? {};
  if (subject === SUBJECTS.identityProviderCreated) {
    return { action: 'identity_provider.created', target, changes: changesOf(FIELDS.filter((f) => after[f] !== undefined && after[f] !== null && after[f] !== ''), undefined, after) };
  }
  if (subject === SUBJECTS.identityProviderDeleted) return { action: 'identity_provider.deleted', target, changes: changesOf(['name'], after, undefined) };
  return { action: 'identity_provider.updated', target, changes: changesOf(e.changedFields, providerView(e.before), after) };
}
