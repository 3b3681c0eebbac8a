/**
 * TypeORM mappings of second factors (TOTP, recovery codes, passkeys and their challenges) and
 * sessions (created by migrations; checked against them by a test, as entities.ts).
 */
import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

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

/**
 * Single-use recovery codes: only a keyed digest is stored (HMAC-SHA-256 under a key derived from
 * JWT_KEY_ENCRYPTION_KEY, app/recovery-codes.ts), by scheme: 'hmac' (of "<user id>:<code>"),
 * 'hmac-legacy' (of the SHA-256 an older code was stored as), 'sha256' (an older code not re-keyed
 * yet: identity re-keys them at start).
 */
@Entity({ name: 'mfa_recovery_codes' })
@Index('uq_mfa_recovery_codes_user_hash', ['userId', 'codeHash'], {
  unique: true,
})
@Check('ck_mfa_recovery_codes_scheme', `"scheme" IN ('sha256', 'hmac-legacy', 'hmac')`)
export class MfaRecoveryCodeRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('bytea', { name: 'code_hash' })
  codeHash!: Buffer;

  @Column('text')
  scheme!: string;

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

  /** The sign-in's state (app/signin/state.ts), read back through its schema; null in rows made before. */
  @Column('jsonb', { nullable: true })
  flow!: unknown;

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
@Index('ix_webauthn_challenges_owner', ['userId', 'purpose', 'createdAt'])
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
