/**
 * TypeORM mappings of the directory schema. The schema itself is created by migrations; indexes
 * TypeORM cannot express (expression, partial-on-expression, trigram) are declared with
 * `synchronize: false` so the schema check knows they are intended.
 */
import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

@Entity({ name: 'users' })
@Index('uq_users_email_live', ['email'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('ix_users_created', ['createdAt', 'id'])
@Index('ix_users_email_order', ['email', 'id'])
@Index('ix_users_name_order', ['lastName', 'firstName', 'id'])
@Index('ix_users_search_words', { synchronize: false })
@Index('uq_users_external_id_live', ['externalId'], { unique: true, where: '"deleted_at" IS NULL AND "external_id" IS NOT NULL' })
@Index('ix_users_legacy_hash', { synchronize: false })
export class UserRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text', { name: 'first_name' })
  firstName!: string;

  @Column('text', { name: 'last_name' })
  lastName!: string;

  /** Trimmed and lower-cased. */
  @Column('text')
  email!: string;

  @Column('bigint', { nullable: true, transformer: { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  phone!: number | null;

  @Column('text', { name: 'password_hash' })
  passwordHash!: string;

  @Column('boolean', { name: 'email_verified', default: false })
  emailVerified!: boolean;

  /** The user's id in the system it was imported from; unique among live users. */
  @Column('text', { name: 'external_id', nullable: true })
  externalId!: string | null;

  /** 'hook': no hash yet; the legacy system's endpoint is asked once, at the first sign-in. */
  @Column('text', { name: 'password_migration', nullable: true })
  passwordMigration!: string | null;

  /** Imported with `passwordChangeRequired`: the source system wanted a new password at the next sign-in. */
  @Column('boolean', { name: 'password_change_required', default: false })
  passwordChangeRequired!: boolean;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;

  /** SCIM `active: false` (migration 1767100000100): no sign-in, no refresh, no organization grant. */
  @Column('timestamptz', { name: 'disabled_at', nullable: true })
  disabledAt!: Date | null;
}

/** Roles and permissions share their columns: a name (unique among live rows, case-insensitively, and so is its lookalike key), a description, soft delete. */
abstract class NamedRecord {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  /**
   * lookalikeKey(name) (@iam/platform, UTS #39 skeletons), written with the name by the stores;
   * NULL only for a live lookalike that existed before the rule (migration 1764600000100).
   */
  @Column('text', { name: 'name_skeleton', nullable: true })
  nameSkeleton!: string | null;

  @Column('text', { default: '' })
  description!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}

@Entity({ name: 'roles' })
@Index('uq_roles_name_live', { synchronize: false })
@Index('uq_roles_name_skeleton_live', ['nameSkeleton'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('ix_roles_created', ['createdAt', 'id'])
@Index('ix_roles_name_trgm', { synchronize: false })
@Index('ix_roles_description_trgm', { synchronize: false })
export class RoleRow extends NamedRecord {}

@Entity({ name: 'permissions' })
@Index('uq_permissions_name_live', { synchronize: false })
@Index('uq_permissions_name_skeleton_live', ['nameSkeleton'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('ix_permissions_created', ['createdAt', 'id'])
@Index('ix_permissions_name_trgm', { synchronize: false })
@Index('ix_permissions_description_trgm', { synchronize: false })
export class PermissionRow extends NamedRecord {}

/** A grant of a permission to a role; revoking sets `revoked_at` (the row stays for audit). */
@Entity({ name: 'role_permissions' })
@Index('uq_role_permissions_live', ['roleId', 'permissionId'], { unique: true, where: '"revoked_at" IS NULL' })
@Index('ix_role_permissions_created', ['createdAt', 'id'])
@Index('ix_role_permissions_permission', ['permissionId'])
export class RolePermissionRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'role_id' })
  roleId!: string;

  @Column('uuid', { name: 'permission_id' })
  permissionId!: string;

  @ManyToOne(() => RoleRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'fk_role_permissions_role' })
  role?: RoleRow;

  @ManyToOne(() => PermissionRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'permission_id', foreignKeyConstraintName: 'fk_role_permissions_permission' })
  permission?: PermissionRow;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}

@Entity({ name: 'user_roles' })
@Index('ix_user_roles_role', ['roleId'])
export class UserRoleRow {
  @PrimaryColumn('uuid', { name: 'user_id' })
  userId!: string;

  @PrimaryColumn('uuid', { name: 'role_id' })
  roleId!: string;

  @ManyToOne(() => UserRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_user_roles_user' })
  user?: UserRow;

  @ManyToOne(() => RoleRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'fk_user_roles_role' })
  role?: RoleRow;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

/** Password resets applied, by the email-action token's id (one change per token; retries answer the same). */
@Entity({ name: 'password_resets' })
@Index('ix_password_resets_changed', ['changedAt'])
export class PasswordResetRow {
  @PrimaryColumn('uuid', { name: 'reset_id' })
  resetId!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('uuid', { name: 'attempt_id' })
  attemptId!: string;

  @Column('timestamptz', { name: 'changed_at', default: () => 'now()' })
  changedAt!: Date;
}
