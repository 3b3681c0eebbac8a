/**
 * Organizations (issue #41): the records and the ports their use cases need. Every port method
 * that reads or writes something inside an organization takes that organization's id, and every
 * query its stores run carries the predicate `organization_id = $1`: an id of another
 * organization's object finds nothing (404), whatever the caller holds.
 */
import type { ListPosition, ListQuery, Page } from './model';
import type { Stores } from './ports';

/** The built-in organization role: its holders administer that organization's members, invitations and roles. */
export const ORG_ADMIN_ROLE = 'org.admin';

export interface Organization {
  readonly id: string;
  readonly name: string;
  /** Lower-case; unique among live organizations, and so is its lookalike key. */
  readonly slug: string;
  /** Whether a user whose verified email is on a verified domain joins on sign-in (just in time). */
  readonly jitEnabled: boolean;
  /** The organization roles a member who joins just in time gets (names, sorted). */
  readonly jitRoles: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

/** A role of the platform-wide organization role template, with the permissions it grants. */
export interface OrganizationRole {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** Names of the live permissions, sorted. */
  readonly permissions: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

export interface Member {
  readonly organizationId: string;
  readonly userId: string;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly emailVerified: boolean;
  /** Names of the member's organization roles there, sorted. */
  readonly roles: readonly string[];
  readonly joinedAt: Date;
}

/** What a member holds in one organization: for org tokens and delegated administration. */
export interface MembershipGrant {
  readonly organization: { readonly id: string; readonly slug: string; readonly name: string };
  readonly roles: readonly string[];
  /** The live permissions of those roles, sorted. */
  readonly permissions: readonly string[];
}

export type RowLock = { readonly forUpdate?: boolean; readonly forShare?: boolean; readonly includeDeleted?: boolean };

export interface OrganizationStore {
  /** CONFLICT (field slug) when a live organization has the slug or one that looks the same. */
  insert(o: { id: string; name: string; slug: string }): Promise<void>;
  update(id: string, patch: Partial<{ name: string; slug: string; jitEnabled: boolean; jitRoleIds: readonly string[] }>): Promise<void>;
  softDelete(id: string): Promise<boolean>;
  findById(id: string, opts?: RowLock): Promise<Organization | null>;
  findBySlug(slug: string): Promise<Organization | null>;
  /** Live organizations; with `memberId`, only those the user is a member of. */
  list(query: ListQuery, filter?: { memberId?: string }): Promise<Page<Organization>>;
}

export interface OrganizationRoleStore {
  /** CONFLICT (field name) when a live organization role's name looks the same. */
  insert(r: { id: string; name: string; description: string }): Promise<void>;
  update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void>;
  softDelete(id: string): Promise<boolean>;
  findById(id: string, opts?: RowLock): Promise<OrganizationRole | null>;
  list(query: ListQuery): Promise<Page<OrganizationRole>>;
  /** Live roles named (case-insensitively), locked FOR SHARE; unknown names are absent. */
  findLiveByNames(names: readonly string[]): Promise<OrganizationRole[]>;
  /** Replaces the permissions a role grants. */
  setPermissions(roleId: string, permissionIds: readonly string[]): Promise<void>;
}

/** A member list: `after` a member (keyset on joined-at and user id), else the `page`; `q` a case-insensitive substring of the email or names. */
export type MemberQuery = Pick<ListQuery, 'pageSize' | 'after' | 'q'> & { readonly page?: number };

export interface MemberStore {
  /** False when the user is a member already. */
  add(organizationId: string, userId: string): Promise<boolean>;
  remove(organizationId: string, userId: string): Promise<boolean>;
  /** The live user's membership of this organization (null: not a member, or the user is deleted). */
  find(organizationId: string, userId: string, opts?: { forUpdate?: boolean }): Promise<Member | null>;
  /** The live member with this (normalised) email. */
  findByEmail(organizationId: string, email: string): Promise<Member | null>;
  /** A keyset page of the organization's live members (never counted past the first page). */
  list(organizationId: string, query: MemberQuery): Promise<{ items: Member[]; next?: ListPosition; totalCount: number; totalCountExact: boolean }>;
  /** Replaces the member's organization roles in this organization. */
  setRoles(organizationId: string, userId: string, roleIds: readonly string[]): Promise<void>;
  /** What the user holds in this organization (null: not a member of a live organization). */
  grant(organizationId: string, userId: string): Promise<MembershipGrant | null>;
  /** Every live organization the user is a member of, with what they hold there. */
  grantsOf(userId: string): Promise<MembershipGrant[]>;
  /** Live members holding org.admin in this organization, their rows locked (the last admin rule). */
  lockAdmins(organizationId: string): Promise<string[]>;
}

/** The stores the organization use cases get (transactions and single statements alike). */
export interface OrganizationStores {
  readonly organizations: OrganizationStore;
  readonly organizationRoles: OrganizationRoleStore;
  readonly members: MemberStore;
  readonly invitations: InvitationStore;
  readonly domains: DomainStore;
}

/** What the organization use cases are given: the organization stores and the directory's users, principals and permissions. */
export type OrgUseCaseStores = OrganizationStores & Pick<Stores, 'users' | 'principals' | 'permissions'>;

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface Invitation {
  readonly id: string;
  readonly organizationId: string;
  /** Lower-cased: the only address that may accept it. */
  readonly email: string;
  /** Organization role names the invitee gets, sorted. */
  readonly roles: readonly string[];
  /** `expired`: pending past its expiry (never stored so). */
  readonly status: InvitationStatus;
  readonly invitedBy: string | null;
  readonly expiresAt: Date;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface InvitationStore {
  insert(i: { id: string; organizationId: string; email: string; roleIds: readonly string[]; tokenHash: Buffer; invitedBy: string; expiresAt: Date }): Promise<void>;
  /** The organization's stored-pending invitation of this email (expired or not), locked. */
  findPending(organizationId: string, email: string): Promise<Invitation | null>;
  find(organizationId: string, id: string): Promise<Invitation | null>;
  /** A re-send: a new token and expiry, the roles replaced, the same invitation. */
  renew(organizationId: string, id: string, r: { roleIds: readonly string[]; tokenHash: Buffer; expiresAt: Date }): Promise<void>;
  revoke(organizationId: string, id: string): Promise<boolean>;
  list(organizationId: string, query: MemberQuery): Promise<Page<Invitation>>;
  /** The invitation a token names (any organization: the token is the capability), locked; null for an unknown token. */
  findByToken(tokenHash: Buffer): Promise<(Invitation & { roleIds: string[] }) | null>;
  markAccepted(organizationId: string, id: string, userId: string): Promise<boolean>;
}

export type DomainStatus = 'pending' | 'verified' | 'failed';

export interface OrganizationDomain {
  readonly id: string;
  readonly organizationId: string;
  /** Lower-case, IDNA A-labels. */
  readonly domain: string;
  readonly status: DomainStatus;
  /** The TXT value `_iam-challenge.<domain>` must hold. */
  readonly challenge: string;
  readonly checkedAt: Date | null;
  readonly verifiedAt: Date | null;
  readonly createdAt: Date;
}

export interface DomainStore {
  insert(d: { id: string; organizationId: string; domain: string; challenge: string }): Promise<void>;
  find(organizationId: string, id: string, opts?: { forUpdate?: boolean }): Promise<OrganizationDomain | null>;
  list(organizationId: string, query: MemberQuery): Promise<Page<OrganizationDomain>>;
  /** Records a check's outcome; CONFLICT (domain) when another organization verified it first. */
  setStatus(organizationId: string, id: string, status: DomainStatus): Promise<void>;
  remove(organizationId: string, id: string): Promise<boolean>;
  /** Domains due a re-check (pending, or verified), oldest check first. */
  due(limit: number, checkedBefore: Date): Promise<OrganizationDomain[]>;
  /** Whether this organization verified this domain (lower-case A-labels); the row is locked FOR SHARE until the transaction ends. */
  isVerified(organizationId: string, domain: string): Promise<boolean>;
  /** Live organizations allowing just-in-time membership that verified this domain. */
  jitOrganizations(domain: string): Promise<Array<{ organizationId: string; roleIds: string[] }>>;
}

/** DNS TXT lookups (node:dns/promises in production, a stub in tests). */
export interface TxtResolver {
  /** The TXT records of a name (each its chunks joined); [] when the name or the record does not exist. Throws on a failed lookup. */
  txt(name: string): Promise<string[]>;
}
