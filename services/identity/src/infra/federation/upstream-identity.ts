/** What an upstream vouched for, after the provider's claim mapping, and why one was refused. */
import type { ClaimMapping } from '../../domain/identity-providers';

/** Why an upstream sign-in was refused (audited as `reason`; the user sees one plain page). */
export type UpstreamRefusalReason =
  | 'state'
  | 'code'
  | 'issuer'
  | 'audience'
  | 'algorithm'
  | 'expired'
  | 'nonce'
  | 'token'
  | 'denied'
  | 'unavailable'
  | 'no-subject'
  | 'unverified-email';

export class UpstreamRefusal extends Error {
  constructor(
    readonly reason: UpstreamRefusalReason,
    cause?: unknown,
  ) {
    super(`upstream sign-in refused: ${reason}`, cause === undefined ? undefined : { cause });
    this.name = 'UpstreamRefusal';
  }
}

export interface UpstreamIdentity {
  readonly issuer: string;
  /** The mapped subject (the `subject` claims joined by ":"). */
  readonly subject: string;
  readonly email?: string;
  /** The upstream's own statement about the email; the provider's trust decides what it is worth. */
  readonly emailVerified: boolean;
  readonly givenName?: string;
  readonly familyName?: string;
  readonly amr: readonly string[];
  readonly acr?: string;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined);

/** The identity in an ID token's (or userinfo's) claims under the mapping; no subject → UpstreamRefusal('no-subject'). */
export function identityFromClaims(claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping, issuer: string): UpstreamIdentity {
  const parts = mapping.subject.map((c) => text(claims[c]));
  if (parts.length === 0 || parts.some((p) => p === undefined)) throw new UpstreamRefusal('no-subject');
  const email = text(claims[mapping.email])?.toLowerCase();
  const verified = claims[mapping.emailVerified];
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((a): a is string => typeof a === 'string') : [];
  return {
    issuer,
    subject: parts.join(':'),
    ...(email ? { email } : {}),
    emailVerified: email !== undefined && (verified === true || verified === 'true'),
    ...(text(claims[mapping.givenName]) ? { givenName: text(claims[mapping.givenName]) } : {}),
    ...(text(claims[mapping.familyName]) ? { familyName: text(claims[mapping.familyName]) } : {}),
    amr,
    ...(text(claims.acr) ? { acr: text(claims.acr) } : {}),
  };
}
