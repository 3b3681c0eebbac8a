/** Ports of the identity service's use cases. */
import type { UnitOfWork as PlatformUnitOfWork } from '@iam/platform';
import type { AccessClaims, Principal, PublicJwk, RefreshRecord } from './model';

/** The directory, as identity needs it (implemented over gRPC). */
export interface Directory {
  /** The principal for valid credentials; null for any failure (one answer, one cost). */
  verifyCredentials(email: string, password: string): Promise<Principal | null>;
  /** Null for an unknown or deleted user. */
  principal(userId: string): Promise<Principal | null>;
  /** The live account with this email, or null. */
  findAccount(email: string): Promise<Principal | null>;
  /** VALIDATION (field newPassword) when the password breaks the policy; NOT_FOUND for a deleted user. */
  setPassword(userId: string, password: string): Promise<void>;
  markEmailVerified(userId: string): Promise<void>;
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
}

/** Fixed-window counters of requests per key (a hashed email) and purpose. */
export interface ThrottleStore {
  /** Counts a request; 0 when allowed, else the seconds until the window ends. */
  hit(keyHash: Buffer, purpose: string, limit: number, windowSeconds: number): Promise<number>;
}

/** Signs and verifies access tokens with identity's own keys. */
export interface TokenService {
  issue(principal: Principal): Promise<{ token: string; jti: string; expiresAt: Date }>;
  /** Signature, algorithm, kid, issuer, audience, exp/nbf; not the denylist. Throws UNAUTHENTICATED. */
  verify(token: string): Promise<AccessClaims>;
  jwks(): Promise<PublicJwk[]>;
}

export interface RefreshTokenStore {
  /** Inserts the first token of a new family and clears the email's failed-login count, atomically. */
  startFamily(r: { id: string; familyId: string; userId: string; tokenHash: Buffer; expiresAt: Date }, emailHash: Buffer): Promise<void>;
  /**
   * Rotates atomically: marks the live token with `hash` rotated and inserts its successor in the
   * same family. Null when the token is unknown, rotated, revoked or expired (then nothing changed).
   * Of concurrent rotations of one token, exactly one succeeds.
   */
  rotate(hash: Buffer, next: { id: string; tokenHash: Buffer }): Promise<{ familyId: string; userId: string; expiresAt: Date } | null>;
  findByHash(hash: Buffer): Promise<RefreshRecord | null>;
  revokeFamily(familyId: string): Promise<number>;
  revokeAllOfUser(userId: string): Promise<number>;
}

/** Failed logins per normalised email; counts are exact under concurrency (one row, updated atomically). */
export interface LockoutStore {
  isLocked(emailHash: Buffer): Promise<boolean>;
  /** Counts a failure; locks when the count reaches `max`. An expired lock starts the count again. */
  recordFailure(emailHash: Buffer, max: number, lockMinutes: number): Promise<{ count: number; locked: boolean }>;
  clear(emailHash: Buffer): Promise<void>;
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
  readonly emailActions: EmailActionStore;
  readonly throttle: ThrottleStore;
}

/** Runs `fn` in one database transaction; events it publishes go to the outbox in that transaction. */
export type UnitOfWork = PlatformUnitOfWork<IdentityStores>;
