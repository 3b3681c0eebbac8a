/**
 * Ports the directory's use cases need. Reading users and reading password hashes are separate
 * ports (Kratos' Pool and PrivilegedPool): `Stores` has no way to read a hash, and only the
 * credential use cases get `PrivilegedStores`.
 */
import type { UnitOfWork as PlatformUnitOfWork } from '@iam/platform';
import type { LinkQuery, ListQuery, Page, Permission, Principal, Role, RolePermission, User } from './model';

export interface UserStore {
  /** Throws CONFLICT (field email) when a live user has the email. */
  insert(user: { id: string; firstName: string; lastName: string; email: string; phone: number | null; passwordHash: string }): Promise<void>;
  /** Applies the given fields; throws CONFLICT (field email) on a duplicate. */
  update(id: string, patch: Partial<{ firstName: string; lastName: string; email: string; phone: number | null; passwordHash: string; emailVerified: boolean }>): Promise<void>;
  /** Replaces the user's role assignments. */
  setRoles(userId: string, roleIds: readonly string[]): Promise<void>;
  softDelete(id: string): Promise<boolean>;
  findById(id: string, opts?: { includeDeleted?: boolean; forUpdate?: boolean }): Promise<User | null>;
  list(query: ListQuery): Promise<Page<User>>;
  /**
   * Ids of the live users holding the live Administrator role, after locking that role's row:
   * transactions that could remove an Administrator serialise here, so two of them cannot each
   * leave the other as the last one and both succeed.
   */
  lockAdministrators(): Promise<string[]>;
}

/** Who a user is and what they hold now (no secret): for tokens and authorization checks. */
export interface PrincipalStore {
  /** Names, live roles and the live permissions they grant; null for an unknown or deleted user. */
  findById(userId: string): Promise<Principal | null>;
}

/** Privileged: password hashes, the email-verified flag and the records of password resets. */
export interface CredentialStore {
  /** The live user with this (normalised) email and its hash. */
  findByEmail(email: string): Promise<{ id: string; passwordHash: string } | null>;
  setPasswordHash(userId: string, hash: string): Promise<boolean>;
  /**
   * Records that reset `resetId` changes the user's password now; when it was recorded already,
   * returns that earlier record instead (and records nothing).
   */
  recordPasswordReset(r: { resetId: string; userId: string; attemptId: string }): Promise<{ first: boolean; userId: string; attemptId: string; changedAt: Date }>;
  markEmailVerified(userId: string): Promise<boolean>;
  /** The live user with this (normalised) email: its hash, migration mark and principal, in one read. */
  credentialsByEmail(email: string): Promise<StoredCredentials | null>;
  /**
   * Replaces the hash only while it is still `expected` (a rehash after a sign-in: a concurrent
   * password change wins) and clears the migration mark with it; false when nothing changed.
   */
  replacePasswordHash(userId: string, expected: string, hash: string): Promise<boolean>;
  /** Stores the first hash of a user migrated through the hook, only while it is still marked. */
  completeMigration(userId: string, hash: string): Promise<boolean>;
  /** The live user's hash while it must change its password (row locked: in a transaction); null when it need not. */
  passwordChangeRequired(userId: string): Promise<{ passwordHash: string } | null>;
}

/** What a sign-in reads: the hash (empty while a hook migration is pending), the mark and the principal. */
export interface StoredCredentials {
  readonly passwordHash: string;
  readonly passwordMigration: 'hook' | null;
  readonly externalId: string | null;
  /** Imported with passwordChangeRequired: a new password before the sign-in completes. */
  readonly passwordChangeRequired: boolean;
  readonly principal: Principal;
}

/** Row lock of a read in a transaction: FOR UPDATE (changing it) or FOR SHARE (depending on it). */
export interface RowLock {
  readonly includeDeleted?: boolean;
  readonly forUpdate?: boolean;
  readonly forShare?: boolean;
}

export interface RoleStore {
  /**
   * Throws CONFLICT (field name) when a live role has the name (case-insensitively) or one that
   * looks the same (the same lookalikeKey of @iam/platform).
   */
  insert(role: { id: string; name: string; description: string }): Promise<void>;
  /** CONFLICT as insert's for a new name. */
  update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void>;
  softDelete(id: string): Promise<boolean>;
  findById(id: string, opts?: RowLock): Promise<Role | null>;
  list(query: ListQuery): Promise<Page<Role>>;
  /**
   * Live roles matching the names case-insensitively, with the permissions they grant; locked
   * FOR SHARE, so a concurrent delete of one waits for the assignment (or the assignment sees it gone).
   */
  findLiveByNames(names: readonly string[]): Promise<Array<{ id: string; name: string; permissions: string[] }>>;
}

export interface PermissionStore {
  /** CONFLICT as RoleStore.insert's, among permissions. */
  insert(permission: { id: string; name: string; description: string }): Promise<void>;
  update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void>;
  softDelete(id: string): Promise<boolean>;
  findById(id: string, opts?: RowLock): Promise<Permission | null>;
  list(query: ListQuery): Promise<Page<Permission>>;
  /** The live permissions among `names` (case-insensitive); unknown names are absent. */
  findLiveByNames(names: readonly string[]): Promise<Array<{ id: string; name: string; description: string }>>;
}

export interface RolePermissionStore {
  /** Throws CONFLICT when the role already holds the permission. */
  insert(link: { id: string; roleId: string; permissionId: string }): Promise<void>;
  update(id: string, patch: Partial<{ roleId: string; permissionId: string }>): Promise<void>;
  revoke(id: string): Promise<boolean>;
  /** Revokes every live link of a role or a permission; returns the revoked links. */
  revokeAllOf(by: { roleId?: string; permissionId?: string }): Promise<RolePermission[]>;
  findById(id: string, opts?: { forUpdate?: boolean }): Promise<RolePermission | null>;
  list(query: LinkQuery): Promise<Page<RolePermission>>;
}

/** The stores any use case may be given; none of them reads a password hash. */
export interface Stores {
  readonly users: UserStore;
  readonly principals: PrincipalStore;
  readonly roles: RoleStore;
  readonly permissions: PermissionStore;
  readonly links: RolePermissionStore;
}

/** A user as the bulk import writes it: the hash in its stored form (empty while a hook migration is pending). */
/** A TOTP factor an import line brings (Keycloak's OTP credentials): its secret in base32 and its parameters. */
export interface ImportedTotp {
  readonly secret: string;
  readonly algorithm: string;
  readonly digits: number;
  readonly period: number;
}

/** Identity's ImportTotp (gRPC, this service's signed call assertion): enrols the factor active. */
export interface TotpImporter {
  /** "enrolled", or "unchanged" when the user has this secret already; throws AppError otherwise. */
  importTotp(userId: string, totp: ImportedTotp): Promise<'enrolled' | 'unchanged'>;
}

export interface ImportedUserRow {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: number | null;
  readonly passwordHash: string;
  readonly emailVerified: boolean;
  readonly externalId: string | null;
  readonly passwordMigration: 'hook' | null;
  readonly passwordChangeRequired: boolean;
  readonly roleIds: readonly string[];
}

/** Privileged: the bulk import's writes (hashes included). */
export interface ImportStore {
  /** Which of these keys a user holds already: emails and external ids of live users (with the user's id), ids of any (deleted ones too). */
  existing(keys: { emails: readonly string[]; externalIds: readonly string[]; ids: readonly string[] }): Promise<{ emails: Map<string, string>; externalIds: Map<string, string>; ids: Set<string> }>;
  /** Inserts the users and their role assignments; the ids actually inserted (a row another writer took meanwhile is left out). */
  insertMany(users: readonly ImportedUserRow[]): Promise<Set<string>>;
}

/** The credential use cases' stores: the others and the password hashes. */
export interface PrivilegedStores extends Stores {
  readonly credentials: CredentialStore;
  readonly imports: ImportStore;
}

/** Runs `fn` in one database transaction; events it publishes go to the outbox in that transaction. */
export type UnitOfWork<S = Stores> = PlatformUnitOfWork<S>;
/** A UnitOfWork whose transactions also see the password hashes: the credential use cases' only. */
export type PrivilegedUnitOfWork = UnitOfWork<PrivilegedStores>;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password or a malformed hash; never throws for those. */
  verify(hash: string, password: string): Promise<boolean>;
  /** Costs one verification, for answers that must not be faster when there is no user. */
  verifyDummy(password: string): Promise<void>;
  /** Whether the hash was made with other parameters than the current ones (re-hash after a login). */
  needsRehash(hash: string): boolean;
}

/** A password hash as an import gives it: a PHC/Modular Crypt string, or parts for formats without one. */
export type HashInput = string | { readonly algorithm: string; readonly hash: string; readonly salt?: string; readonly params?: Readonly<Record<string, string | number>> };

/** The stored form and family of an accepted hash, or why it is refused. */
export type ImportedHash = { ok: true; stored: string; family: string; weak: boolean } | { ok: false; reason: string };

/** Checks imported hashes: unknown formats, malformed values and absurd costs are refused here, never at sign-in. */
export interface ImportedHashes {
  accept(input: HashInput): ImportedHash;
}

/**
 * The legacy system's password check for users imported with `passwordMigration: "hook"`:
 * `unavailable` (timeout, 5xx, network) fails the sign-in closed, as `invalid` does.
 */
export interface LegacyPasswordHook {
  check(request: { email: string; password: string; externalId: string | null }): Promise<'valid' | 'invalid' | 'unavailable'>;
}
