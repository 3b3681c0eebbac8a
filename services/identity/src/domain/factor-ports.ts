/** Ports of the second factors: TOTP, recovery codes, passkeys, and the sign-in's single-use challenges. */
/** What second factors a user has, read in one statement (every sign-in asks). */
export interface MfaStatusStore {
  get(userId: string): Promise<{ totp: boolean; passkeys: number; recoveryCodesLeft: number }>;
}

export interface TotpStore {
  /** `activatedAt`: when a first right code activated it (null while pending). */
  get(userId: string): Promise<{ sealedSecret: Buffer; active: boolean; activatedAt: Date | null; lastStep: number } | null>;
  /** Stores a pending secret, replacing a pending one; false (nothing changed) when one is active. */
  putPending(userId: string, sealedSecret: Buffer): Promise<boolean>;
  /** Stores an imported secret as active (replacing a pending one); false (nothing changed) when one is active. */
  putActive(userId: string, sealedSecret: Buffer): Promise<boolean>;
  /** Activates the pending secret with its first accepted step; false when there is none pending. */
  activate(userId: string, step: number): Promise<boolean>;
  /** Records `step` as used when it is later than the last one (atomic); false when it is not (replay). */
  useStep(userId: string, step: number): Promise<boolean>;
  /** Whether there was one. */
  remove(userId: string): Promise<boolean>;
}

/**
 * How a recovery code's digest was made (app/recovery-codes.ts): 'hmac' (new codes), 'hmac-legacy'
 * (an older code's SHA-256, re-keyed), 'sha256' (an older code not re-keyed yet).
 */
export type RecoveryCodeScheme = 'sha256' | 'hmac-legacy' | 'hmac';

/** Single-use recovery codes; only digests are stored, each with its scheme. */
export interface RecoveryCodeStore {
  /** Replaces the user's codes with these digests (scheme 'hmac'). */
  replace(userId: string, digests: readonly Buffer[]): Promise<void>;
  /** Marks an unused code used (atomic): a row whose digest is the one of its own scheme; false when there is none. */
  use(userId: string, digests: Readonly<Record<RecoveryCodeScheme, Buffer>>): Promise<boolean>;
  countLeft(userId: string): Promise<number>;
  /** The unused codes: how many, and when the set was made; null when none is left. */
  unused(userId: string): Promise<{ left: number; madeAt: Date } | null>;
  removeAll(userId: string): Promise<number>;
  /**
   * Re-keys up to `limit` rows still of scheme 'sha256' (locked, others skipped) to 'hmac-legacy'
   * with `rekey` (the old digest in, the new out); how many. Run until it answers 0.
   */
  rekeyLegacy(limit: number, rekey: (digest: Buffer) => Buffer): Promise<number>;
}

/** What an mfa token answers: a second factor, an enrolment, or (after the factors) a new password. */
export type MfaPurpose = 'verify' | 'enrol' | 'password';

export interface MfaChallengeRecord {
  readonly id: string;
  readonly userId: string;
  readonly emailHash: Buffer;
  readonly purpose: MfaPurpose;
  /** The sign-in's state as stored (app/signin/state.ts reads it through its schema); null in rows made before. */
  readonly flow?: unknown;
}

/** The single-use tokens between a right password and its second factor; only hashes are stored. */
export interface MfaChallengeStore {
  create(c: MfaChallengeRecord & { tokenHash: Buffer; expiresAt: Date }): Promise<void>;
  /** The unused, unexpired challenge with this hash; null when there is none. */
  find(tokenHash: Buffer): Promise<MfaChallengeRecord | null>;
  /** Marks it used (atomic); false when it was used or expired meanwhile. */
  consume(id: string): Promise<boolean>;
}

/** A registered WebAuthn credential (public data only). */
export interface PasskeyRecord {
  readonly id: string;
  readonly userId: string;
  readonly credentialId: Buffer;
  readonly publicKey: Buffer;
  readonly counter: number;
  readonly transports: readonly string[];
  /** 'singleDevice' (bound to one authenticator) or 'multiDevice' (synced). */
  readonly deviceType: string;
  readonly backedUp: boolean;
  readonly aaguid: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/** Passkeys (WebAuthn credentials); a credential id is registered once across all users. */
export interface PasskeyStore {
  /** False (nothing stored) when the credential id is registered already. */
  add(p: Omit<PasskeyRecord, 'createdAt' | 'lastUsedAt'>): Promise<boolean>;
  listOf(userId: string): Promise<PasskeyRecord[]>;
  count(userId: string): Promise<number>;
  findByCredentialId(credentialId: Buffer): Promise<PasskeyRecord | null>;
  /**
   * Records a use: the new signature counter and backup state. False when the counter went
   * backwards (a cloned authenticator; a counter of 0 on both sides is a device without one).
   */
  used(id: string, counter: number, backedUp: boolean): Promise<boolean>;
  rename(id: string, userId: string, name: string): Promise<boolean>;
  remove(id: string, userId: string): Promise<boolean>;
  removeAll(userId: string): Promise<number>;
}

export type WebauthnPurpose = 'register' | 'signin' | 'factor';

/** Single-use WebAuthn challenges, looked up by the SHA-256 of the challenge the client signed. */
export interface WebauthnChallengeStore {
  /**
   * Stores a challenge; with `keep`, of the user's challenges of this purpose only the newest
   * `keep` (this one included) stay: the others are dropped in the same statement.
   */
  create(c: { challengeHash: Buffer; purpose: WebauthnPurpose; userId: string | null; mfaChallengeId: string | null; expiresAt: Date }, opts?: { keep?: number }): Promise<void>;
  /** Deletes and returns the unexpired challenge of this purpose; null when there is none (used, expired, unknown). */
  take(challengeHash: Buffer, purpose: WebauthnPurpose): Promise<{ userId: string | null; mfaChallengeId: string | null } | null>;
  /** Records a passwordless sign-in's challenge spent until it expires; false when it was spent already. */
  spend(challengeHash: Buffer, expiresAt: Date): Promise<boolean>;
}
