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

/** What a list can be ordered by (each collection offers some: LIST_SORTS); the id breaks ties. */
export type SortKey = 'createdAt' | 'email' | 'lastName' | 'name';

/** The sort keys each collection offers; the first is the default (spec: createdAt, id). */
export const LIST_SORTS = {
  users: ['createdAt', 'email', 'lastName'],
  roles: ['createdAt', 'name'],
  permissions: ['createdAt', 'name'],
  'role-permissions': ['createdAt'],
  organizations: ['createdAt', 'name'],
  'organization-roles': ['createdAt', 'name'],
  'organization-members': ['createdAt'],
  'organization-invitations': ['createdAt'],
  'organization-domains': ['createdAt'],
} as const satisfies Record<string, readonly SortKey[]>;
export type Collection = keyof typeof LIST_SORTS;

export interface ListOrder {
  readonly key: SortKey;
  readonly desc: boolean;
}

/**
 * A keyset position: a row's values of the order's columns (created_at as microseconds since
 * the epoch, in decimal; text columns as they are) and its id. The page after it holds the rows
 * that follow it in the order.
 */
export interface ListPosition {
  readonly values: readonly string[];
  readonly id: string;
}

export interface ListQuery {
  readonly page: number;
  readonly pageSize: number;
  /** Case-insensitive substring; matched literally (no wildcards). */
  readonly q?: string;
  readonly includeDeleted: boolean;
  /** Absent: createdAt ascending (the spec's order). */
  readonly order?: ListOrder;
  /** A keyset page: the rows after this position (`page` is not used and nothing is counted). */
  readonly after?: ListPosition;
  /**
   * A keyset page: the matches the first page counted, when that count was exact. A hint for
   * the store's plan only (a cursor is not signed: never trusted for what a page holds).
   */
  readonly countedMatches?: number;
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
  /** The last item's position when more rows follow it (absent on the last page). */
  readonly next?: ListPosition;
}

export const ADMINISTRATOR_ROLE = 'Administrator';
