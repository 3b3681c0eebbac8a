/**
 * What an upstream sign-in may do to the accounts here (issue #40 item 4): the linking matrix as one
 * pure function, so every cell is a table test (federation-linking.test.ts) and the use case only
 * carries the decision out.
 *
 * An upstream identity is keyed on (provider, iss, sub), never on an email address. An email is
 * only ever used to find a local account when nothing is linked yet, and then it decides little:
 *
 * - **Auto-link** only when the local account's email is verified here, the upstream says its
 *   email is verified, and the provider is configured to be believed about that
 *   (`trustEmailVerified`), with `linking: "verified-email"`.
 * - **Prove the local account** (its password or a passkey, then link) for every other match of a
 *   verified local account, and for every match under `linking: "re-authenticate"`.
 * - **Refuse** a match of a local account whose email was never verified (pre-hijack, decision in
 *   services/identity/README.md "Signing in with another identity provider"): whoever registered
 *   that address with a password never proved the mailbox, so neither the upstream's word nor that
 *   password may attach an identity to it. The user is told to verify that account's email first
 *   (a password reset proves the mailbox and replaces the password).
 * - **Sign up** a separate account when no local account matches and the provider allows it; its
 *   email counts as verified only when the upstream says so and the provider is trusted for it.
 * - An identity already linked signs in as the user it is linked to whatever email it now
 *   carries (nOAuth: a changed or forged `email` never moves it to another account).
 */

/** How a provider may attach upstream identities to existing accounts. */
export type LinkingMode = 'verified-email' | 're-authenticate' | 'never';

export interface LinkingPolicy {
  readonly trustEmailVerified: boolean;
  readonly allowSignUp: boolean;
  readonly linking: LinkingMode;
}

/** What the upstream asserted, after the claim mapping. */
export interface UpstreamFacts {
  /** The user the (provider, iss, sub) identity is already linked to, if any. */
  readonly linkedUserId?: string;
  readonly email?: string;
  /** The upstream's own statement (`email_verified`, GitHub's `/user/emails` `verified`). */
  readonly emailVerified: boolean;
}

/** The local account whose email equals the upstream email (lower-cased), if any. */
export interface LocalMatch {
  readonly userId: string;
  readonly emailVerified: boolean;
}

export type RefusalReason = 'local-email-unverified' | 'linking-disabled' | 'sign-up-disabled' | 'no-email';

export type LinkDecision =
  | { readonly kind: 'sign-in'; readonly userId: string }
  | { readonly kind: 'auto-link'; readonly userId: string }
  | { readonly kind: 'prove-local'; readonly userId: string }
  | { readonly kind: 'sign-up'; readonly emailVerified: boolean }
  | { readonly kind: 'refuse'; readonly reason: RefusalReason };

/** Whether this sign-in's email counts as verified here: the upstream says so and the provider is believed. */
export const trustedEmail = (policy: LinkingPolicy, facts: UpstreamFacts): boolean => policy.trustEmailVerified && facts.emailVerified && !!facts.email;

export function decideLink(policy: LinkingPolicy, facts: UpstreamFacts, local: LocalMatch | undefined): LinkDecision {
  if (facts.linkedUserId) return { kind: 'sign-in', userId: facts.linkedUserId };
  if (!local) {
    if (!policy.allowSignUp) return { kind: 'refuse', reason: 'sign-up-disabled' };
    if (!facts.email) return { kind: 'refuse', reason: 'no-email' };
    return { kind: 'sign-up', emailVerified: trustedEmail(policy, facts) };
  }
  if (policy.linking === 'never') return { kind: 'refuse', reason: 'linking-disabled' };
  if (!local.emailVerified) return { kind: 'refuse', reason: 'local-email-unverified' };
  if (policy.linking === 'verified-email' && trustedEmail(policy, facts)) return { kind: 'auto-link', userId: local.userId };
  return { kind: 'prove-local', userId: local.userId };
}
