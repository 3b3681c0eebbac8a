/** Entities of migration 1765500000300-identity-providers (the schema test compares them with it). */
import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'identity_providers' })
@Index('ix_identity_providers_order', ['createdAt', 'id'])
@Index('uq_identity_providers_live_name', ['name'], { unique: true, where: '"deleted_at" IS NULL' })
@Check('ck_identity_providers_kind', `"kind" IN ('oidc', 'github', 'google')`)
@Check('ck_identity_providers_linking', `"linking" IN ('verified-email', 're-authenticate', 'never')`)
export class IdentityProviderRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  kind!: string;

  @Column('text')
  name!: string;

  @Column('text', { name: 'display_name' })
  displayName!: string;

  @Column('text', { name: 'discovery_url', nullable: true })
  discoveryUrl!: string | null;

  @Column('text', { name: 'client_id' })
  clientId!: string;

  @Column('bytea', { name: 'sealed_client_secret', nullable: true })
  sealedClientSecret!: Buffer | null;

  @Column('text', { array: true, default: () => "'{}'" })
  scopes!: string[];

  @Column('jsonb', { name: 'claim_mapping' })
  claimMapping!: unknown;

  @Column('boolean', { name: 'trust_email_verified', default: false })
  trustEmailVerified!: boolean;

  @Column('boolean', { name: 'trust_upstream_mfa', default: false })
  trustUpstreamMfa!: boolean;

  @Column('boolean', { name: 'allow_sign_up', default: false })
  allowSignUp!: boolean;

  @Column('text')
  linking!: string;

  @Column('text', { name: 'default_roles', array: true, default: () => "'{}'" })
  defaultRoles!: string[];

  @Column('text', { name: 'icon_url', default: '' })
  iconUrl!: string;

  @Column('boolean', { default: true })
  enabled!: boolean;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;

  @Column('integer', { default: 1 })
  version!: number;
}

@Entity({ name: 'federated_identities' })
@Index('uq_federated_identities_key', ['providerId', 'issuer', 'subject'], { unique: true })
@Index('ix_federated_identities_user', ['userId'])
export class FederatedIdentityRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('uuid', { name: 'provider_id' })
  providerId!: string;

  @Column('text')
  issuer!: string;

  @Column('text')
  subject!: string;

  @Column('text', { default: '' })
  email!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;
}

@Entity({ name: 'upstream_sign_ins' })
@Index('ix_upstream_sign_ins_expires', ['expiresAt'])
@Check('ck_upstream_sign_ins_purpose', `"purpose" IN ('sign-in', 'link')`)
export class UpstreamSignInRow {
  @PrimaryColumn('bytea', { name: 'state_hash' })
  stateHash!: Buffer;

  @Column('uuid', { name: 'provider_id' })
  providerId!: string;

  @Column('text')
  nonce!: string;

  @Column('text', { name: 'code_verifier' })
  codeVerifier!: string;

  @Column('text')
  purpose!: string;

  @Column('text')
  binding!: string;

  @Column('uuid', { name: 'user_id', nullable: true })
  userId!: string | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;
}
