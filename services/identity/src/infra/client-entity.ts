/** The TypeORM mapping of the OAuth client registry (created by migrations; checked against them by a test). */
import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * OAuth clients (DESIGN §5): only the SHA-256 of a confidential client's secret; soft-deleted;
 * `version` increases with every change (optimistic updates).
 */
@Entity({ name: 'oauth_clients' })
@Index('ix_oauth_clients_order', ['createdAt', 'clientId'])
@Check('ck_oauth_clients_type', `"type" IN ('public', 'confidential')`)
export class OAuthClientRow {
  @PrimaryColumn('text', { name: 'client_id' })
  clientId!: string;

  @Column('text')
  name!: string;

  @Column('text')
  type!: string;

  @Column('bytea', { name: 'secret_hash', nullable: true })
  secretHash!: Buffer | null;

  @Column('text', { name: 'redirect_uris', array: true, default: () => "'{}'" })
  redirectUris!: string[];

  @Column('text', { name: 'post_logout_redirect_uris', array: true, default: () => "'{}'" })
  postLogoutRedirectUris!: string[];

  @Column('text', { name: 'grant_types', array: true, default: () => "'{}'" })
  grantTypes!: string[];

  @Column('text', { array: true, default: () => "'{}'" })
  roles!: string[];

  @Column('boolean', { name: 'require_par', default: false })
  requirePar!: boolean;

  @Column('boolean', { name: 'dpop_bound', default: false })
  dpopBound!: boolean;

  @Column('text', { name: 'api_permissions', array: true, default: () => "'{}'" })
  apiPermissions!: string[];

  @Column('text', { name: 'id_token_signed_response_alg', default: 'RS256' })
  idTokenSignedResponseAlg!: string;

  @Column('text', { name: 'userinfo_signed_response_alg', nullable: true })
  userinfoSignedResponseAlg!: string | null;

  @Column('boolean', { name: 'resource_server', default: false })
  resourceServer!: boolean;

  @Column('boolean', { name: 'first_party', default: false })
  firstParty!: boolean;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;

  @Column('integer', { default: 1 })
  version!: number;
}
