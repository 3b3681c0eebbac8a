/** The directory's records as use cases see them (never a password hash: see CredentialStore). */

export interface User {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  /** Trimmed and lower-cased. */
  readonly email: string;
  readonly phone: number | null;
  readonly emailVerified: boolean;
  /** Names of the user's live roles, sorted. */
  readonly roles: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

export interface Role {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** Names of the live permissions granted to the role, sorted. */
  readonly permissions: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

export interface Permission {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

/** A live grant of a permission to a role. */
export interface RolePermission {
  readonly id: string;
  readonly roleId: string;
  readonly permissionId: string;
  readonly roleName: string;
  readonly permissionName: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Who a user is for token issuance. */
export interface Principal {
  readonly userId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly roles: readonly string[];
  readonly permissions: readonly string[];
  readonly emailVerified: boolean;
}

export interface ListQuery {
  readonly page: number;
  readonly pageSize: number;
  /** Case-insensitive substring; matched literally (no wildcards). */
  readonly q?: string;
  readonly includeDeleted: boolean;
}

/** A list of links, optionally narrowed to one role and/or one permission. */
export interface LinkQuery extends ListQuery {
  readonly roleId?: string;
  readonly permissionId?: string;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Exact up to the store's count bound; beyond it an estimate (`totalCountExact` false). */
  readonly totalCount: number;
  readonly totalCountExact: boolean;
}

export const ADMINISTRATOR_ROLE = 'Administrator';
