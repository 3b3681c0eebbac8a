/** Ports of the identity service's use cases. */
import type { UnitOfWork as PlatformUnitOfWork } from '@iam/platform';
import type { AccessClaims, Principal, PublicJwk, RefreshRecord } from './model';

/** The directory, as identity needs it (implemented over gRPC). */
export interface Directory {
  /**
   * The principal for valid credentials; null for any failure (one answer, one cost).
   * `accountExists` is for the lockout's accounting only. With `skipEvaluation` (a locked email)
   * the password is not checked, at the same cost.
   */
  verifyCredentials(email: string, password: string, opts?: { skipEvaluation?: boolean }): Promise<{ principal: Principal | null; accountExists: boolean }>;
  /** Null for an unknown or deleted user. */
  principal(userId: string): Promise<Principal | null>;
  /** The live account with this email, or null. */
  findAccount(email: string): Promise<Principal | null>;
  /**
   * VALIDATION (field newPassword) when the password breaks the policy; NOT_FOUND for a deleted
   * user, or one no longer at the address whose hash is `emailHash`.
   */
  setPassword(userId: string, password: string, emailHash: Buffer): Promise<void>;
  /** NOT_FOUND for a deleted user, or one no longer at the address whose hash is `emailHash`. */
  markEmailVerified(userId: string, emailHash: Buffer): Promise<void>;
}

export type EmailPurpose = 'password_reset' | 'email_verification';

/** Single-use email-action tokens; only their SHA-256 is stored. */
export interface EmailActionStore {
  /** Stores a new token and invalidates the account's earlier unused tokens of that purpose. */
  issue(t: { id: string; userId: string; purpose: EmailPurpose; tokenHash: Buffer; emailHash: Buffer; expiresAt: Date }): Promise<void>;
  /** Marks an unused, unexpired, not invalidated token used; null when there is none. */
  claim(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null>;
  /** Undoes a claim whose action failed (e.g. a weak new password), so the token can be used again. */
  release(id: string): Promise<void>;
  /** Invalidates every pending token of the user (its address changed); returns how many. */
  invalidateAllOf(userId: string): Promise<number>;
}

/** Fixed-window counters of requests per key (a hashed email) and purpose. */
export interface ThrottleStore {
  /** Counts a request; 0 when allowed, else the seconds until the window ends. */
  hit(keyHash: Buffer, purpose: string, limit: number, windowSeconds: number): Promise<number>;
}

/** Signs and verifies access tokens with identity's own keys. */
export interface TokenService {
  /** With `notBefore` (the subject's revocation time), the token's iat is not earlier than it. */
  issue(principal: Principal, opts?: { notBefore?: Date | null }): Promise<{ token: string; jti: string; expiresAt: Date }>;
  /** Signature, algorithm, kid, issuer, audience, exp/nbf; not the denylist. Throws UNAUTHENTICATED. */
  verify(token: string): Promise<AccessClaims>;
  jwks(): Promise<PublicJwk[]>;
}

export interface RefreshTokenStore {
  /**
   * Inserts the first token of a new family and clears the email's failed-login count, atomically;
   * returns the subject's revocation time, if any (see SubjectRevocationStore).
   */
  startFamily(r: { id: string; familyId: string; userId: string; tokenHash: Buffer; expiresAt: Date }, emailHash: Buffer): Promise<{ subjectNotBefore: Date | null }>;
  /**
   * Rotates atomically: marks the live token with `hash` rotated and inserts its successor in the
   * same family. Null when the token is unknown, rotated, revoked or expired (then nothing changed).
   * Of concurrent rotations of one token, exactly one succeeds.
   */
  rotate(hash: Buffer, next: { id: string; tokenHash: Buffer }): Promise<{ familyId: string; userId: string; expiresAt: Date; subjectNotBefore: Date | null } | null>;
  findByHash(hash: Buffer): Promise<RefreshRecord | null>;
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
}

/**
 * Subject-level revocation: every access token of a user issued before `notBefore` is refused
 * (deleted user, changed password or email), until `expiresAt` when such tokens have expired.
 */
export interface SubjectRevocationStore {
  /** Records the revocation, keeping the later time when there is one already. */
  revoke(userId: string, notBefore: Date, expiresAt: Date): Promise<{ notBefore: Date; expiresAt: Date }>;
  notBefore(userId: string): Promise<Date | null>;
  active(): Promise<Array<{ userId: string; notBefore: Date; expiresAt: Date }>>;
}

export interface DenylistStore {
  /** True when the jti was not on the list yet. */
  add(jti: string, userId: string, expiresAt: Date): Promise<boolean>;
  has(jti: string): Promise<boolean>;
  active(): Promise<Array<{ jti: string; expiresAt: Date }>>;
}

export interface IdentityStores {
  readonly refreshTokens: RefreshTokenStore;
  readonly lockouts: LockoutStore;
  readonly denylist: DenylistStore;
  readonly subjects: SubjectRevocationStore;
  readonly emailActions: EmailActionStore;
  readonly throttle: ThrottleStore;
}

/** Runs `fn` in one database transaction; events it publishes go to the outbox in that transaction. */
export type UnitOfWork = PlatformUnitOfWork<IdentityStores>;
