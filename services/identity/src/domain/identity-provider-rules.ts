/**
 * What an identity provider's settings may be (issue #40 item 1). One VALIDATION naming every bad
 * field. Upstream URLs are https, or http on loopback only (a development OP). The presets (github,
 * google) know their endpoints: a discovery URL given for them is refused, not silently ignored.
 */
import { AppError, type FieldError } from '@iam/platform';
import { type ClaimMapping, DEFAULT_CLAIM_MAPPING, LINKING_MODES, PROVIDER_KINDS, type IdentityProviderSettings } from './identity-providers';

/** The settings as given (unchecked strings where the API has enums). */
export interface GivenProviderSettings {
  readonly kind: string;
  readonly name: string;
  readonly displayName: string;
  readonly discoveryUrl: string | null;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly claimMapping: Partial<ClaimMapping> | null;
  readonly trustEmailVerified: boolean;
  readonly trustUpstreamMfa: boolean;
  readonly allowSignUp: boolean;
  readonly linking: string;
  readonly defaultRoles: readonly string[];
  readonly iconUrl: string;
  readonly enabled: boolean;
}

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/;
const CLAIM = /^[A-Za-z0-9_:.\-/]{1,100}$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function upstreamUrlProblem(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (raw.length > 2000) return 'must be at most 2000 characters';
  if (u.username || u.password || u.hash) return 'must not carry credentials or a fragment';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && LOOPBACK.has(u.hostname)) return undefined;
  return 'must be https (http only on loopback)';
}

function iconProblem(raw: string): string | undefined {
  if (raw === '') return undefined;
  if (raw.length > 2000) return 'must be at most 2000 characters';
  try {
    return new URL(raw).protocol === 'https:' ? undefined : 'must be an https URL';
  } catch {
    return 'must be an https URL';
  }
}

export function checkProviderSettings(g: GivenProviderSettings): IdentityProviderSettings {
  const errors: FieldError[] = [];
  const kind = PROVIDER_KINDS.find((k) => k === g.kind);
  if (!kind) errors.push({ field: 'kind', message: `must be one of ${PROVIDER_KINDS.join(', ')}` });
  const name = g.name.trim().toLowerCase();
  if (!NAME.test(name)) errors.push({ field: 'name', message: 'must be 1 to 40 lower-case letters, digits or dashes (not at either end)' });
  const displayName = g.displayName.trim();
  if (displayName.length < 1 || displayName.length > 100) errors.push({ field: 'displayName', message: 'must be 1 to 100 characters' });
  const discoveryUrl = g.discoveryUrl?.trim() || null;
  if (kind === 'oidc') {
    if (!discoveryUrl) errors.push({ field: 'discoveryUrl', message: 'is required for an OpenID Connect provider' });
    else {
      const p = upstreamUrlProblem(discoveryUrl);
      if (p) errors.push({ field: 'discoveryUrl', message: p });
    }
  } else if (kind && discoveryUrl) errors.push({ field: 'discoveryUrl', message: `must be absent for ${kind} (the preset knows its endpoints)` });
  const clientId = g.clientId.trim();
  if (clientId.length < 1 || clientId.length > 500) errors.push({ field: 'clientId', message: 'must be 1 to 500 characters' });
  if (g.scopes.length > 20 || g.scopes.some((s) => !SCOPE.test(s))) errors.push({ field: 'scopes', message: 'must be at most 20 scope tokens (no spaces, quotes or backslashes)' });
  const m: ClaimMapping = { ...DEFAULT_CLAIM_MAPPING, ...Object.fromEntries(Object.entries(g.claimMapping ?? {}).filter(([, v]) => v !== undefined && v !== '')) };
  const subjectOk = m.subject.length >= 1 && m.subject.length <= 4 && m.subject.every((c) => CLAIM.test(c));
  const othersOk = [m.email, m.emailVerified, m.givenName, m.familyName].every((c) => CLAIM.test(c));
  if (!subjectOk || !othersOk) errors.push({ field: 'claimMapping', message: 'names claims (letters, digits, _ : . - /); subject lists 1 to 4 of them' });
  const linking = LINKING_MODES.find((l) => l === g.linking);
  if (!linking) errors.push({ field: 'linking', message: `must be one of ${LINKING_MODES.join(', ')}` });
  if (g.defaultRoles.length > 20) errors.push({ field: 'defaultRoles', message: 'must be at most 20 roles' });
  const icon = iconProblem(g.iconUrl.trim());
  if (icon) errors.push({ field: 'iconUrl', message: icon });
  if (errors.length > 0 || !kind || !linking) throw AppError.validation('The identity provider settings are not valid.', errors);
  return {
    kind,
    name,
    displayName,
    discoveryUrl: kind === 'oidc' ? discoveryUrl : null,
    clientId,
    scopes: [...new Set(g.scopes)],
    claimMapping: { subject: [...m.subject], email: m.email, emailVerified: m.emailVerified, givenName: m.givenName, familyName: m.familyName },
    trustEmailVerified: g.trustEmailVerified,
    trustUpstreamMfa: g.trustUpstreamMfa,
    allowSignUp: g.allowSignUp,
    linking,
    defaultRoles: [...new Set(g.defaultRoles)],
    iconUrl: g.iconUrl.trim(),
    enabled: g.enabled,
  };
}

/** A client secret as given: at most 1000 characters, printable. */
export function checkClientSecret(secret: string): string {
  if (secret.length > 1000 || [...secret].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw AppError.validation('The client secret is not valid.', [{ field: 'clientSecret', message: 'must be at most 1000 printable characters' }]);
  return secret;
}
