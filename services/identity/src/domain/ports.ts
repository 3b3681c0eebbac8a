/** Ports of the identity service's use cases. */
import type { UnitOfWork as PlatformUnitOfWork } from '@iam/platform';
import type { ClientStore } from './clients';
import type { FederatedIdentityStore, UpstreamAttemptStore } from './federated-identities';
import type { IdentityProviderStore } from './identity-providers';
import type { AccessClaims, Principal, PublicJwk, RefreshRecord } from './model';
import type { WorkOrigin } from '@iam/platform';
import type { MfaChallengeStore, MfaStatusStore, PasskeyStore, RecoveryCodeStore, TotpStore, WebauthnChallengeStore } from './factor-ports';

export type * from './factor-ports';

/** The directory, as identity needs it (implemented over gRPC). */
export interface Directory {
  /**
   * The principal for valid credentials; null for any failure (one answer, one cost).
   * `accountExists` is for the lockout's accounting only. With `skipEvaluation` (a locked email)
   * the password is not checked, at the same cost.
   */
  verifyCredentials(
    email: string,
    password: string,
    opts?: { skipEvaluation?: boolean },
  ): Promise<{
    principal: Principal | null;
    accountExists: boolean;
    /** The account's user id when it exists (records only). */
    accountId?: string;
    /** With a principal: the account must choose a new password before its sign-in completes. */
    passwordChangeRequired?: boolean;
  }>;
  /** Null for an unknown or deleted user. */
  principal(userId: string): Promise<Principal | null>;
  /** The live account with this email, or null. */
  findAccount(email: string): Promise<Principal | null>;
  /**
   * Sets the password for reset `resetId` (an email-action token's id) in one directory
   * transaction that also records the reset as used and publishes `directory.user.updated` with
   * `passwordResetId`. Safe to retry with the same `attemptId`. VALIDATION (field newPassword)
   * when the password breaks the policy (nothing changed); NOT_FOUND for a deleted user, one no
   * longer at the address whose hash is `emailHash`, or a reset another attempt used.
   */
  resetPassword(r: { userId: string; password: string; emailHash: Buffer; resetId: string; attemptId: string }): Promise<{ changedAt: Date; email: string; firstName: string }>;
  /** NOT_FOUND for a deleted user, or one no longer at the address whose hash is `emailHash`. */
  markEmailVerified(userId: string, emailHash: Buffer): Promise<void>;
  /**
   * The new password of an account that must change it at sign-in, the mark cleared (one
   * directory transaction, `directory.user.updated` with `passwordChangedAtSignIn`). VALIDATION
   * (field newPassword) for a password the policy refuses or the current one; CONFLICT when the
   * account has no such mark any more.
   */
  changeRequiredPassword(userId: string, password: string): Promise<void>;
  /** The live roles among `names` (case-insensitive) with their live permissions; unknown names are absent. */
  resolveRoles(names: readonly string[]): Promise<Array<{ name: string; permissions: string[] }>>;
  /** The live permissions among `names` (case-insensitive), as the directory spells them, with their descriptions; unknown names are absent. */
  resolvePermissions(names: readonly string[]): Promise<Array<{ name: string; description: string }>>;
}

export type EmailPurpose = 'password_reset' | 'email_verification';

/** Single-use email-action tokens; only their SHA-256 is stored. */
export interface EmailActionStore {
  /** Stores a new token and invalidates the account's earlier unused tokens of that purpose. */
  issue(t: { id: string; userId: string; purpose: EmailPurpose; tokenHash: Buffer; emailHash: Buffer; expiresAt: Date }): Promise<void>;
  /** The unused, unexpired, not invalidated token with this hash (nothing changed); null when there is none. */
  pending(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null>;
  /**
   * Marks token `id` of the user used, whatever else became of it since (the directory already
   * applied it): `consumed` the first time, `already` after that, `missing` when the row is gone.
   */
  consume(id: string, userId: string): Promise<{ outcome: 'consumed'; emailHash: Buffer } | { outcome: 'already' | 'missing' }>;
  /** Marks an unused, unexpired, not invalidated token used; null when there is none. */
  claim(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null>;
  /** Undoes a claim whose action failed (e.g. a weak new password), so the token can be used again. */
  release(id: string): Promise<void>;
  /**
   * Invalidates every pending token of the user (its address changed), but those mailed to the
   * address whose hash is `keep` (the new one: a verification asked for right after the change
   * may be issued before the change's event is handled); returns how many.
   */
  invalidateAllOf(userId: string, keep?: Buffer): Promise<number>;
}

/** An accepted email-action request waiting to be processed. */
export interface EmailActionRequest {
  readonly id: string;
  readonly purpose: EmailPurpose;
  readonly emailHash: Buffer;
  /** Password reset: the address, sealed with AAD = id. */
  readonly sealedEmail: Buffer | null;
  /** Email verification: the account. */
  readonly userId: string | null;
  readonly createdAt: Date;
  readonly attempts: number;
  /** The request's trace and context, resumed when it is processed (its event carries them). */
  readonly origin?: WorkOrigin;
}

/**
 * Accepted email-action requests (written before the 202, so a crash cannot lose one). The worker
 * claims due ones in a transaction and completes each in it, with the token and event it issues.
 */
export interface EmailActionRequestStore {
  enqueue(r: { id: string; purpose: EmailPurpose; emailHash: Buffer; sealedEmail?: Buffer; userId?: string }): Promise<void>;
  /** Due requests, oldest first, locked for this transaction (others skip them). */
  claimDue(limit: number): Promise<EmailActionRequest[]>;
  complete(id: string): Promise<void>;
  /** Keeps the request for another try after `delayMs`. */
  retryLater(id: string, delayMs: number, error: string): Promise<void>;
}

/** Fixed-window counters of requests per key (a hashed email) and purpose. */
export interface ThrottleStore {
  /** Counts a request; 0 when allowed, else the seconds until the window ends. */
  hit(keyHash: Buffer, purpose: string, limit: number, windowSeconds: number): Promise<number>;
}

/** What a token says of the sign-in it comes from: `sid`, `amr` (RFC 8176) and `auth_time`. */
export interface TokenSession {
  readonly sid: string;
  readonly amr: readonly string[];
  readonly authTime: Date;
}

/** Signs and verifies access tokens with identity's own keys (over the key ring). */
/**
 * An organization token's organization (issue #41): the token then carries `org`, an `aud` of
 * that organization beside the API's, no platform roles, and the principal's permissions as given
 * (the member's there).
 */
export interface OrganizationClaim {
  readonly id: string;
  readonly slug: string;
}

export interface TokenService {
  /** With `notBefore` (the subject's revocation time), the token's iat is not earlier than it; `jti` when the caller recorded it already. */
  issue(principal: Principal, opts?: { notBefore?: Date | null; session?: TokenSession; jti?: string; org?: OrganizationClaim }): Promise<{ token: string; jti: string; expiresAt: Date }>;
  /** Signature, algorithm, kid, issuer, audience, exp/nbf; not the denylist. Throws UNAUTHENTICATED. */
  verify(token: string): Promise<AccessClaims>;
}

/** The public halves of the signing keys (the JWKS): the key that signs now, its successor, and retired keys whose tokens may still be live. */
export interface PublishedKeys {
  jwks(): Promise<PublicJwk[]>;
}

export interface RefreshTokenStore {
  /**
   * Inserts the first token of a new family and clears the email's failed-login count, atomically;
   * returns the subject's revocation time, if any (see SubjectRevocationStore). With `session`, the
   * same statement starts the family's session (its id is the family's) and records its first
   * access token (its jti and an upper bound of its expiry).
   */
  startFamily(
    r: { id: string; familyId: string; userId: string; tokenHash: Buffer; expiresAt: Date },
    emailHash: Buffer,
    session?: { userAgent: string; ip: string; amr: readonly string[]; authTime: Date; access: { jti: string; expiresAt: Date } },
  ): Promise<{ subjectNotBefore: Date | null }>;
  /**
   * Rotates atomically: marks the live token with `hash` rotated and inserts its successor in the
   * same family. When the token with `hash` was itself rotated at most `graceSeconds` ago (a client
   * retrying a refresh whose answer it never got), the live token its rotation led to is rotated
   * instead, through successors superseded by earlier such retries but never past one rotated by
   * its own use: the retry gets a fresh successor and the family stays valid. Null when neither
   * applies (unknown, revoked or expired token; rotated earlier; a successor used), and then
   * nothing changed. Of concurrent rotations of one token, exactly one succeeds.
   *
   * With `access` (the access token about to be signed: its jti and an upper bound of its expiry),
   * the same statement marks the family's session used and records the token against it (what
   * ending the session must deny); `session` is then that session (absent for a family older than
   * sessions, or an ended one).
   */
  rotate(
    hash: Buffer,
    next: { id: string; tokenHash: Buffer; access?: { jti: string; expiresAt: Date } },
    graceSeconds: number,
  ): Promise<{ familyId: string; userId: string; expiresAt: Date; subjectNotBefore: Date | null; session?: TokenSession } | null>;
  /** The token with `hash`; `retryable` as `rotate` would see it with `graceSeconds`. */
  findByHash(hash: Buffer, graceSeconds?: number): Promise<RefreshRecord | null>;
  revokeFamily(familyId: string): Promise<number>;
  revokeAllOfUser(userId: string): Promise<number>;
}

/**
 * Login attempts per normalised email. An attempt is reserved before its password is evaluated, in
 * one atomic statement, so at most `max` passwords are ever evaluated per lockout window however
 * many arrive at once; the `max`-th reservation starts the lock, and a success clears it.
 */
export interface LockoutStore {
  /** Reserves an evaluation: allowed false while the email is locked (nothing counted then). */
  reserve(emailHash: Buffer, max: number, lockMinutes: number): Promise<{ allowed: boolean; count: number }>;
  /** Gives a reservation back (the email has no account, or the check could not be made). */
  release(emailHash: Buffer, max: number): Promise<void>;
  clear(emailHash: Buffer): Promise<void>;
  /** The email's failed count and lock (null: nothing counted). */
  state(emailHash: Buffer): Promise<{ failedCount: number; lockedUntil: Date | null } | null>;
}

/**
 * Subject-level revocation: every access token of a user issued before `notBefore` is refused
 * (deleted user, changed password or email), until `expiresAt` when such tokens have expired.
 */
export interface SubjectRevocationStore {
  /** Records the revocation, keeping the later time when there is one already. */
  revoke(userId: string, notBefore: Date, expiresAt: Date): Promise<{ notBefore: Date; expiresAt: Date }>;
  /** The latest revocation of any of these subjects (a token's `sub`, and its client's); null when none. */
  notBefore(...subjects: string[]): Promise<Date | null>;
  active(): Promise<Array<{ userId: string; notBefore: Date; expiresAt: Date }>>;
}

export interface DenylistStore {
  /** True when the jti was not on the list yet. */
  add(jti: string, userId: string, expiresAt: Date): Promise<boolean>;
  has(jti: string): Promise<boolean>;
  active(): Promise<Array<{ jti: string; expiresAt: Date }>>;
}


export interface SessionRecord {
  readonly id: string;
  readonly userId: string;
  readonly userAgent: string;
  readonly ip: string;
  readonly amr: readonly string[];
  readonly authTime: Date;
  readonly createdAt: Date;
  readonly lastUsedAt: Date;
}

/** Sessions: one per REST login (its id is the refresh family's), and the access tokens each issued. */
export interface SessionStore {
  start(s: { id: string; userId: string; userAgent: string; ip: string; amr: readonly string[]; authTime: Date; expiresAt: Date }): Promise<void>;
  /** Marks a live session used now; returns it, or null when it is unknown or ended. */
  touch(id: string): Promise<SessionRecord | null>;
  recordToken(sessionId: string, jti: string, expiresAt: Date): Promise<void>;
  /** The user's live (not ended, not expired; for a provider session, its record still there) sessions, the last used first. */
  listLive(userId: string): Promise<SessionRecord[]>;
  /**
   * An OpenID provider sign-in: the session of the provider's session `opSessionUid` (a new row,
   * or the same row signed in again: its user, device and sign-in replaced, live again). Its id.
   */
  startOp(s: { id: string; opSessionUid: string; userId: string; userAgent: string; ip: string; amr: readonly string[]; authTime: Date; expiresAt: Date }): Promise<string>;
  /** The live session of a provider session, marked used now; null when none. */
  touchOp(opSessionUid: string): Promise<string | null>;
  /** The id of the live session of a provider session; null when none. */
  opSessionId(opSessionUid: string): Promise<string | null>;
  /**
   * Ends a live session of the user; null when there is none, else its unexpired access tokens.
   * A provider session's record, and the grants (codes, refresh tokens) it holds, end with it.
   */
  end(id: string, userId: string): Promise<Array<{ jti: string; expiresAt: Date }> | null>;
  /**
   * Ends every live session of the user, and every record the provider holds of the account
   * (sessions, grants, codes, refresh tokens), so none goes on unlisted. Their access tokens are
   * the caller's to revoke (by subject, or the one presented).
   */
  endAllOf(userId: string): Promise<number>;
  /** The unexpired access tokens the user's session `id` issued to one OAuth client. */
  clientTokens(id: string, userId: string, clientId: string): Promise<Array<{ jti: string; expiresAt: Date }>>;
}

export interface IdentityStores {
  /** The OAuth client registry (with the configuration's built-in clients). */
  readonly clients: ClientStore;
  readonly refreshTokens: RefreshTokenStore;
  readonly lockouts: LockoutStore;
  readonly denylist: DenylistStore;
  readonly subjects: SubjectRevocationStore;
  readonly emailActions: EmailActionStore;
  readonly throttle: ThrottleStore;
  readonly emailRequests: EmailActionRequestStore;
  readonly totp: TotpStore;
  readonly mfaStatus: MfaStatusStore;
  readonly recoveryCodes: RecoveryCodeStore;
  readonly mfaChallenges: MfaChallengeStore;
  readonly sessions: SessionStore;
  /** The OpenID provider's records (sessions, grants, codes, tokens), as use cases end them. */
  readonly providerGrants: ProviderGrantStore;
  readonly passkeys: PasskeyStore;
  readonly webauthnChallenges: WebauthnChallengeStore;
  /** Upstream identity providers (issue #40), their linked identities and sign-ins under way. */
  readonly identityProviders: IdentityProviderStore;
  readonly federatedIdentities: FederatedIdentityStore;
  readonly upstreamAttempts: UpstreamAttemptStore;
}

/**
 * The OpenID provider's stored records, seen from the use cases: ending a client's grants in the
 * transaction that deletes or re-points the client, so no consent, refresh token, code or device
 * code of it outlives the commit (the provider also refuses an unknown client on its own).
 */
export interface ProviderGrantStore {
  /**
   * Deletes every grant (users' consents), code, token and device code of the client; answers how
   * many records went and how many of them were grants.
   */
  endClient(clientId: string): Promise<{ records: number; grants: number }>;
}

/**
 * The provider's token requests write as one statement (infra/oidc/token-writes.ts): a session
 * marked used, and an access token recorded under it, go out with the token request's other
 * writes (all of them or none).
 */
export interface OpTokenRecords {
  record(opSessionUid: string, token?: { jti: string; expiresAt: Date; clientId: string }): Promise<void>;
}

/** Runs `fn` in one database transaction; events it publishes go to the outbox in that transaction. */
export type UnitOfWork<S = IdentityStores> = PlatformUnitOfWork<S>;
