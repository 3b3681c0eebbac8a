/**
 * TypeORM mappings of the organization tables (migration 1767000000100), for the schema check:
 * the stores write plain SQL, each statement naming its organization.
 */
import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { PermissionRow, UserRow } from './entities';

@Entity({ name: 'organizations' })
@Index('uq_organizations_slug_live', ['slug'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('uq_organizations_slug_skeleton_live', ['slugSkeleton'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('ix_organizations_created', ['createdAt', 'id'])
export class OrganizationRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  /** Lower-cased; unique among live organizations, and so is its lookalike key. */
  @Column('text')
  slug!: string;

  @Column('text', { name: 'slug_skeleton' })
  slugSkeleton!: string;

  @Column('boolean', { name: 'jit_enabled', default: false })
  jitEnabled!: boolean;

  @Column('uuid', { name: 'jit_role_ids', array: true, default: () => "'{}'" })
  jitRoleIds!: string[];

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}

/** The platform-wide template of organization roles. */
@Entity({ name: 'organization_roles' })
@Index('uq_organization_roles_name_skeleton_live', ['nameSkeleton'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('ix_organization_roles_created', ['createdAt', 'id'])
export class OrganizationRoleRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  @Column('text', { name: 'name_skeleton' })
  nameSkeleton!: string;

  @Column('text', { default: '' })
  description!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}

@Entity({ name: 'organization_role_permissions' })
@Index('ix_organization_role_permissions_permission', ['permissionId'])
export class OrganizationRolePermissionRow {
  @PrimaryColumn('uuid', { name: 'organization_role_id', primaryKeyConstraintName: 'pk_organization_role_permissions' })
  organizationRoleId!: string;

  @PrimaryColumn('uuid', { name: 'permission_id', primaryKeyConstraintName: 'pk_organization_role_permissions' })
  permissionId!: string;

  @ManyToOne(() => OrganizationRoleRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_role_id', foreignKeyConstraintName: 'fk_org_role_permissions_role' })
  role?: OrganizationRoleRow;

  @ManyToOne(() => PermissionRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'permission_id', foreignKeyConstraintName: 'fk_org_role_permissions_permission' })
  permission?: PermissionRow;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

@Entity({ name: 'organization_members' })
@Index('ix_organization_members_list', ['organizationId', 'createdAt', 'userId'])
@Index('ix_organization_members_user', ['userId'])
export class OrganizationMemberRow {
  @PrimaryColumn('uuid', { name: 'organization_id', primaryKeyConstraintName: 'pk_organization_members' })
  organizationId!: string;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'pk_organization_members' })
  userId!: string;

  @ManyToOne(() => OrganizationRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'fk_organization_members_organization' })
  organization?: OrganizationRow;

  @ManyToOne(() => UserRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_organization_members_user' })
  user?: UserRow;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

@Entity({ name: 'organization_member_roles' })
@Index('ix_organization_member_roles_role', ['organizationRoleId'])
export class OrganizationMemberRoleRow {
  @PrimaryColumn('uuid', { name: 'organization_id', primaryKeyConstraintName: 'pk_organization_member_roles' })
  organizationId!: string;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'pk_organization_member_roles' })
  userId!: string;

  @PrimaryColumn('uuid', { name: 'organization_role_id', primaryKeyConstraintName: 'pk_organization_member_roles' })
  organizationRoleId!: string;

  @ManyToOne(() => OrganizationMemberRow, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'organization_id', referencedColumnName: 'organizationId', foreignKeyConstraintName: 'fk_organization_member_roles_member' },
    { name: 'user_id', referencedColumnName: 'userId', foreignKeyConstraintName: 'fk_organization_member_roles_member' },
  ])
  member?: OrganizationMemberRow;

  @ManyToOne(() => OrganizationRoleRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_role_id', foreignKeyConstraintName: 'fk_organization_member_roles_role' })
  role?: OrganizationRoleRow;
}

@Entity({ name: 'organization_domains' })
@Check('ck_organization_domains_status', `"status" IN ('pending', 'verified', 'failed')`)
@Index('uq_organization_domains_org_domain', ['organizationId', 'domain'], { unique: true })
@Index('uq_organization_domains_verified', ['domain'], { unique: true, where: `"status" = 'verified'` })
@Index('ix_organization_domains_list', ['organizationId', 'createdAt', 'id'])
export class OrganizationDomainRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'fk_organization_domains_organization' })
  organization?: OrganizationRow;

  @Column('text')
  domain!: string;

  @Column('text', { default: 'pending' })
  status!: string;

  @Column('text')
  challenge!: string;

  @Column('timestamptz', { name: 'checked_at', nullable: true })
  checkedAt!: Date | null;

  @Column('timestamptz', { name: 'verified_at', nullable: true })
  verifiedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

@Entity({ name: 'organization_invitations' })
@Check('ck_organization_invitations_status', `"status" IN ('pending', 'accepted', 'revoked')`)
@Index('uq_organization_invitations_pending', ['organizationId', 'email'], { unique: true, where: `"status" = 'pending'` })
@Index('uq_organization_invitations_token', ['tokenHash'], { unique: true })
@Index('ix_organization_invitations_list', ['organizationId', 'createdAt', 'id'])
export class OrganizationInvitationRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'fk_organization_invitations_organization' })
  organization?: OrganizationRow;

  @Column('text')
  email!: string;

  @Column('uuid', { name: 'role_ids', array: true, default: () => "'{}'" })
  roleIds!: string[];

  @Column('bytea', { name: 'token_hash' })
  tokenHash!: Buffer;

  @Column('text', { default: 'pending' })
  status!: string;

  @Column('uuid', { name: 'invited_by', nullable: true })
  invitedBy!: string | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('uuid', { name: 'accepted_by', nullable: true })
  acceptedBy!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

export const organizationEntities = [OrganizationRow, OrganizationRoleRow, OrganizationRolePermissionRow, OrganizationMemberRow, OrganizationMemberRoleRow, OrganizationDomainRow, OrganizationInvitationRow];
