/** TypeORM mappings of the identity schema (created by migrations; checked against them by a test). */
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** JWT signing keys; the private half sealed with the key-encryption key. */
@Entity({ name: 'signing_keys' })
export class SigningKeyRow {
  @PrimaryColumn('text')
  kid!: string;

  @Column('text')
  alg!: string;

  @Column('jsonb', { name: 'public_jwk' })
  publicJwk!: Record<string, unknown>;

  @Column('bytea', { name: 'private_key' })
  privateKey!: Buffer;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  /** Signs from then on. */
  @Column('timestamptz', { name: 'activates_at' })
  activatesAt!: Date;

  /** Stops signing then. */
  @Column('timestamptz', { name: 'retires_at' })
  retiresAt!: Date;

  /** Leaves the JWKS then (its last tokens have expired). */
  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;
}

/** Refresh tokens: only a SHA-256 of the token is stored. One family per login. */
@Entity({ name: 'refresh_tokens' })
@Index('uq_refresh_tokens_hash', ['tokenHash'], { unique: true })
@Index('ix_refresh_tokens_user_live', ['userId'], { where: '"revoked_at" IS NULL' })
@Index('ix_refresh_tokens_family', ['familyId'])
@Index('ix_refresh_tokens_expires', ['expiresAt'])
export class RefreshTokenRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'family_id' })
  familyId!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('bytea', { name: 'token_hash' })
  tokenHash!: Buffer;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'rotated_at', nullable: true })
  rotatedAt!: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  @Column('uuid', { name: 'replaced_by', nullable: true })
  replacedBy!: string | null;

  /** Rotated by a retry of its predecessor within the grace period, not by its own use. */
  @Column('boolean', { default: false })
  superseded!: boolean;
}

/** Failed logins per normalised email (stored as its SHA-256), for the lockout. */
@Entity({ name: 'login_failures' })
export class LoginFailureRow {
  @PrimaryColumn('bytea', { name: 'email_hash' })
  emailHash!: Buffer;

  @Column('integer', { name: 'failed_count' })
  failedCount!: number;

  @Column('timestamptz', { name: 'locked_until', nullable: true })
  lockedUntil!: Date | null;

  @Column('timestamptz', { name: 'last_failed_at' })
  lastFailedAt!: Date;
}

/** The access-token denylist: kept until the token would have expired anyway. */
@Entity({ name: 'revoked_access_tokens' })
@Index('ix_revoked_access_tokens_expires', ['expiresAt'])
export class RevokedAccessTokenRow {
  @PrimaryColumn('text')
  jti!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'revoked_at', default: () => 'now()' })
  revokedAt!: Date;
}

/**
 * Subject-level revocation: the user's access tokens issued before `notBefore` are refused (the
 * user was deleted, or changed password or email); kept until those tokens have expired anyway.
 */
@Entity({ name: 'revoked_subjects' })
@Index('ix_revoked_subjects_expires', ['expiresAt'])
export class RevokedSubjectRow {
  @PrimaryColumn('uuid', { name: 'user_id' })
  userId!: string;

  @Column('timestamptz', { name: 'not_before' })
  notBefore!: Date;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;
}

/** Single-use email-action tokens (password reset, email verification): only a SHA-256 is stored. */
@Entity({ name: 'email_action_tokens' })
@Index('uq_email_action_tokens_hash', ['tokenHash'], { unique: true })
@Index('ix_email_action_tokens_pending', ['userId', 'purpose'], { where: '"used_at" IS NULL AND "invalidated_at" IS NULL' })
@Index('ix_email_action_tokens_expires', ['expiresAt'])
export class EmailActionTokenRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('text')
  purpose!: string;

  @Column('bytea', { name: 'token_hash' })
  tokenHash!: Buffer;

  /** SHA-256 of the normalised email, to clear its failed-login count after a reset. */
  @Column('bytea', { name: 'email_hash' })
  emailHash!: Buffer;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt!: Date | null;

  @Column('timestamptz', { name: 'invalidated_at', nullable: true })
  invalidatedAt!: Date | null;
}

/** Requests per email (hashed) and purpose in the current window, for the per-email rate limit. */
@Entity({ name: 'email_action_throttle' })
export class EmailActionThrottleRow {
  @PrimaryColumn('bytea', { name: 'key_hash' })
  keyHash!: Buffer;

  @PrimaryColumn('text')
  purpose!: string;

  @Column('timestamptz', { name: 'window_start' })
  windowStart!: Date;

  @Column('integer')
  count!: number;
}

/**
 * Accepted email-action requests waiting for the request worker (written before the 202). A
 * password-reset request holds the address sealed (AES-256-GCM, AAD = the id) and its hash; a
 * verification request holds the account's id.
 */
@Entity({ name: 'email_action_requests' })
@Index('ix_email_action_requests_due', ['nextAttemptAt'])
export class EmailActionRequestRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  purpose!: string;

  @Column('bytea', { name: 'email_hash' })
  emailHash!: Buffer;

  @Column('bytea', { name: 'sealed_email', nullable: true })
  sealedEmail!: Buffer | null;

  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('timestamptz', { name: 'next_attempt_at', default: () => 'now()' })
  nextAttemptAt!: Date;

  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  /** The request's trace, continued by the worker. */
  @Column('text', { nullable: true })
  traceparent!: string | null;

  /** The request's context (client IP, user agent, caller), carried by its event. */
  @Column('jsonb', { nullable: true })
  context!: Record<string, string> | null;
}

export { OAuthClientRow } from './client-entity';

/** A user's TOTP secret (RFC 6238), sealed with a key outside the database; active once a code proved it. */
@Entity({ name: 'mfa_totp' })
export class MfaTotpRow {
  @PrimaryColumn('uuid', { name: 'user_id' })
  userId!: string;

  @Column('bytea', { name: 'sealed_secret' })
  sealedSecret!: Buffer;

  @Column('timestamptz', { name: 'activated_at', nullable: true })
  activatedAt!: Date | null;

  /** The last time step accepted: a code of it or an earlier step is refused (replay). */
  @Column('bigint', { name: 'last_step', default: 0 })
  lastStep!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

/** Single-use recovery codes: only a SHA-256 (with the user id) is stored. */
@Entity({ name: 'mfa_recovery_codes' })
@Index('uq_mfa_recovery_codes_user_hash', ['userId', 'codeHash'], {
  unique: true,
})
export class MfaRecoveryCodeRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('bytea', { name: 'code_hash' })
  codeHash!: Buffer;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

/** Single-use mfa tokens (a right password waiting for its second factor): only a SHA-256 is stored. */
@Entity({ name: 'mfa_challenges' })
@Index('uq_mfa_challenges_token', ['tokenHash'], { unique: true })
@Index('ix_mfa_challenges_expires', ['expiresAt'])
export class MfaChallengeRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('bytea', { name: 'email_hash' })
  emailHash!: Buffer;

  @Column('bytea', { name: 'token_hash' })
  tokenHash!: Buffer;

  /** 'verify' or 'enrol'. */
  @Column('text')
  purpose!: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

/** A sign-in: one REST login's refresh family (its id is the family id), or one OpenID provider session. */
@Entity({ name: 'sessions' })
@Index('ix_sessions_user_live', ['userId'], { where: '"ended_at" IS NULL' })
@Index('ix_sessions_expires', ['expiresAt'])
@Index('uq_sessions_op_session_uid', ['opSessionUid'], { unique: true, where: '"op_session_uid" IS NOT NULL' })
export class SessionRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('text', { name: 'user_agent', default: '' })
  userAgent!: string;

  @Column('text', { default: '' })
  ip!: string;

  @Column('text', { array: true })
  amr!: string[];

  @Column('timestamptz', { name: 'auth_time' })
  authTime!: Date;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'last_used_at', default: () => 'now()' })
  lastUsedAt!: Date;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'ended_at', nullable: true })
  endedAt!: Date | null;

  /** An OpenID provider session: the provider's session uid (not its cookie). */
  @Column('text', { name: 'op_session_uid', nullable: true })
  opSessionUid!: string | null;
}

/** The access tokens a session issued, until they expire (ending the session denylists them). */
@Entity({ name: 'session_access_tokens' })
@Index('ix_session_access_tokens_session', ['sessionId'])
@Index('ix_session_access_tokens_expires', ['expiresAt'])
export class SessionAccessTokenRow {
  @PrimaryColumn('text')
  jti!: string;

  @Column('uuid', { name: 'session_id' })
  sessionId!: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  /** The OAuth client it was issued to (a provider token); null for a REST login's. */
  @Column('text', { name: 'client_id', nullable: true })
  clientId!: string | null;
}

/** A WebAuthn passkey: public key, signature counter and backup flags (never a secret). */
@Entity({ name: 'passkeys' })
@Index('uq_passkeys_credential', ['credentialId'], { unique: true })
@Index('ix_passkeys_user', ['userId'])
export class PasskeyRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('bytea', { name: 'credential_id' })
  credentialId!: Buffer;

  /** COSE public key. */
  @Column('bytea', { name: 'public_key' })
  publicKey!: Buffer;

  @Column('bigint', { default: 0 })
  counter!: string;

  @Column('text', { array: true, default: () => "'{}'" })
  transports!: string[];

  /** 'singleDevice' or 'multiDevice' (synced). */
  @Column('text', { name: 'device_type' })
  deviceType!: string;

  @Column('boolean', { name: 'backed_up' })
  backedUp!: boolean;

  @Column('text', { default: '' })
  aaguid!: string;

  @Column('text')
  name!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;
}

/**
 * A WebAuthn ceremony's challenge (single use, five minutes): only its SHA-256 is kept. A
 * passwordless sign-in's challenge is stored only once spent (sign-in-challenge.ts).
 */
@Entity({ name: 'webauthn_challenges' })
@Index('ix_webauthn_challenges_expires', ['expiresAt'])
export class WebauthnChallengeRow {
  @PrimaryColumn('bytea', { name: 'challenge_hash' })
  challengeHash!: Buffer;

  /** 'register', 'factor' (second factor of an mfa token), or 'spent' (a passwordless sign-in's challenge, used); 'signin' rows are from before stateless sign-in challenges and expire. */
  @Column('text')
  purpose!: string;

  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @Column('uuid', { name: 'mfa_challenge_id', nullable: true })
  mfaChallengeId!: string | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

/** The OpenID provider's records (oidc-provider adapter model; see infra/oidc/pg-adapter.ts). */
@Entity({ name: 'oidc_payloads' })
@Index('ix_oidc_payloads_grant', ['grantId'])
@Index('ix_oidc_payloads_user_code', ['userCode'], { where: '"user_code" IS NOT NULL' })
@Index('ix_oidc_payloads_uid', ['uid'], { where: '"uid" IS NOT NULL' })
@Index('ix_oidc_payloads_account', ['accountId'])
@Index('ix_oidc_payloads_expires', ['expiresAt'])
@Index('ix_oidc_payloads_retry', ['consumedAt'], { where: '"retry_answer" IS NOT NULL' })
export class OidcPayloadRow {
  @PrimaryColumn('varchar', { length: 40 })
  kind!: string;

  @PrimaryColumn('varchar', { length: 200 })
  id!: string;

  @Column('jsonb')
  payload!: unknown;

  @Column('varchar', { name: 'grant_id', length: 200, nullable: true })
  grantId!: string | null;

  @Column('varchar', { name: 'user_code', length: 200, nullable: true })
  userCode!: string | null;

  @Column('varchar', { length: 200, nullable: true })
  uid!: string | null;

  @Column('varchar', { name: 'account_id', length: 200, nullable: true })
  accountId!: string | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'consumed_at', nullable: true })
  consumedAt!: Date | null;

  /** A rotated refresh token's answer, sealed, for a retry within the window (refresh-retry.ts). */
  @Column('bytea', { name: 'retry_answer', nullable: true })
  retryAnswer!: Buffer | null;

  /** The successor that rotation issued (a retry is answered only while it is unused). */
  @Column('varchar', { name: 'successor_id', length: 200, nullable: true })
  successorId!: string | null;
}
