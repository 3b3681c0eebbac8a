/**
 * SCIM 2.0 provisioning per organization (issue #42): connections (an organization's SCIM
 * clients, each with its bearer token, stored hashed), the users they provision and the
 * organization groups. Every store method takes the organization's id and every statement
 * carries `organization_id = $1`: an id of another organization's object finds nothing.
 */
import type { ListPosition } from './model';

export interface ScimConnection {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  /** Who made it: a user id. */
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

/** A WHERE fragment with its parameters numbered from `$<offset+1>` (scim-filter.ts makes them). */
export interface SqlCondition {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** A provisioned user as SCIM shows it: the platform's columns and the SCIM-only attributes. */
export interface ScimUserRow {
  readonly userId: string;
  readonly organizationId: string;
  readonly connectionId: string;
  readonly externalId: string | null;
  readonly userName: string;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly active: boolean;
  /** The SCIM attributes without a platform column (displayName, emails, phoneNumbers, the Enterprise extension, …). */
  readonly attributes: Record<string, unknown>;
  readonly version: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface ScimGroupRow {
  readonly id: string;
  readonly organizationId: string;
  readonly displayName: string;
  readonly externalId: string | null;
  /** Organization role names the group's members hold there. */
  readonly roles: readonly string[];
  readonly members: ReadonlyArray<{ readonly userId: string; readonly display: string }>;
  readonly version: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A list: the filter's condition, sort column key, 0-based offset and count. */
export interface ScimListQuery {
  readonly where: SqlCondition | null;
  readonly sortBy: string | null;
  readonly descending: boolean;
  readonly offset: number;
  readonly count: number;
  /** Groups only: read no member. */
  readonly withoutMembers?: boolean;
}

export interface ScimConnectionStore {
  insert(c: { id: string; organizationId: string; name: string; tokenHash: Buffer; createdBy: string }): Promise<void>;
  list(organizationId: string, query: { pageSize: number; page?: number; after?: ListPosition }): Promise<{ items: ScimConnection[]; totalCount: number }>;
  find(organizationId: string, id: string): Promise<ScimConnection | null>;
  revoke(organizationId: string, id: string): Promise<boolean>;
  /** The live connection of a live organization holding this token hash (null: unknown or revoked), its use recorded. */
  authenticate(tokenHash: Buffer): Promise<ScimConnection | null>;
}

export interface ScimUserStore {
  /** CONFLICT (userName) for a userName of the organization, (externalId) for one of the connection. */
  insert(r: { organizationId: string; userId: string; connectionId: string; userName: string; externalId: string | null; attributes: Record<string, unknown> }): Promise<void>;
  find(organizationId: string, userId: string, opts?: { forUpdate?: boolean }): Promise<ScimUserRow | null>;
  update(organizationId: string, userId: string, r: { userName: string; externalId: string | null; attributes: Record<string, unknown> }): Promise<void>;
  list(organizationId: string, q: ScimListQuery): Promise<{ items: ScimUserRow[]; totalResults: number }>;
  /** How many live organizations the user is a member of (disabled or not). */
  organizationsOf(userId: string): Promise<number>;
  /** Sets or clears `users.disabled_at` of a provisioned member. */
  setActive(userId: string, active: boolean): Promise<void>;
}

export interface ScimGroupStore {
  insert(g: { id: string; organizationId: string; displayName: string; externalId: string | null; connectionId: string; roleIds: readonly string[] }): Promise<void>;
  find(organizationId: string, id: string, opts?: { forUpdate?: boolean; withoutMembers?: boolean }): Promise<ScimGroupRow | null>;
  update(organizationId: string, id: string, g: { displayName: string; externalId: string | null; roleIds: readonly string[] }): Promise<void>;
  remove(organizationId: string, id: string): Promise<boolean>;
  /** Replaces the members; ids not members of the organization are ignored by the caller's check first. */
  setMembers(organizationId: string, id: string, userIds: readonly string[]): Promise<void>;
  list(organizationId: string, q: ScimListQuery): Promise<{ items: ScimGroupRow[]; totalResults: number }>;
  /** The users of these ids that are live members of the organization. */
  membersAmong(organizationId: string, userIds: readonly string[]): Promise<string[]>;
}

export interface ScimStores {
  readonly scimConnections: ScimConnectionStore;
  readonly scimUsers: ScimUserStore;
  readonly scimGroups: ScimGroupStore;
}
