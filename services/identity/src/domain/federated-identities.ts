/**
 * Identities of other providers linked to users (issue #40 item 3), keyed on (provider, issuer,
 * subject), never on an email, and the upstream sign-ins under way. Ports only; PostgreSQL in
 * infra/federation/.
 */

export interface FederatedIdentity {
  readonly id: string;
  readonly userId: string;
  readonly providerId: string;
  readonly issuer: string;
  readonly subject: string;
  /** The email the upstream last showed (for the user's list only; never used to find anyone). */
  readonly email: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

export interface FederatedIdentityStore {
  /** The identity (provider, issuer, subject) is linked to; null when none. */
  find(providerId: string, issuer: string, subject: string): Promise<FederatedIdentity | null>;
  listOf(userId: string): Promise<FederatedIdentity[]>;
  countOf(userId: string): Promise<number>;
  /** The user's links, locked until the transaction ends (so two unlinks count one after the other): how many. */
  lockOf(userId: string): Promise<number>;
  /** Links it; null (nothing written) when that (provider, issuer, subject) is linked already, to anyone. */
  link(x: { id: string; userId: string; providerId: string; issuer: string; subject: string; email: string }): Promise<FederatedIdentity | null>;
  /** Records a sign-in with it (and the email it showed). */
  used(id: string, email: string): Promise<void>;
  /** The user's identity `id`, removed; null when the user has none such. */
  unlink(id: string, userId: string): Promise<FederatedIdentity | null>;
}

export type UpstreamPurpose = 'sign-in' | 'link';

/** An upstream sign-in under way: what its callback must match (state by hash, nonce, PKCE verifier, the browser binding). */
export interface UpstreamAttempt {
  readonly providerId: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly purpose: UpstreamPurpose;
  /** What ties it to the browser that started it: the provider interaction's uid (sign-in) or the account session (link). */
  readonly binding: string;
  /** The user a link is for. */
  readonly userId: string | null;
}

export interface UpstreamAttemptStore {
  create(stateHash: Buffer, a: UpstreamAttempt, expiresAt: Date): Promise<void>;
  /** Deletes and returns the unexpired attempt; null when unknown, used or expired (a replayed or forged state). */
  take(stateHash: Buffer): Promise<UpstreamAttempt | null>;
}

/** The directory, as just-in-time sign-up and unlinking need it (over gRPC: infra/federation/directory-provisioning.ts). */
export interface AccountProvisioning {
  /** A password-less account; CONFLICT when the email is taken. */
  provisionUser(input: { email: string; firstName: string; lastName: string; emailVerified: boolean; roles: readonly string[] }): Promise<{ userId: string }>;
  hasPassword(userId: string): Promise<boolean>;
}
