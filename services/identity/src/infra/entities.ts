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

/** Identity's random secrets, sealed with the key-encryption key (infra/sealed-secrets.ts). */
@Entity({ name: 'sealed_secrets' })
export class SealedSecretRow {
  @PrimaryColumn('varchar', { length: 100 })
  name!: string;

  @Column('bytea')
  sealed!: Buffer;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
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
