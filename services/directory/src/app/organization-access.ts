/**
 * Who may act on an organization, decided inside the transaction of the change against what the
 * caller holds now: the platform (Administrator or `organizations.manage`) acts on every
 * organization; a member holding the organization's `org.admin` role acts on that organization's
 * members, invitations and their roles, and nothing else (delegated administration). Anyone
 * else gets NOT_FOUND, the answer an unknown organization gets, so membership cannot be probed;
 * a member without org.admin gets FORBIDDEN (it knows the organization).
 *
 * Within an organization the escalation rules of DESIGN §3 bind a delegated administrator: it
 * assigns an organization role only if it holds (there) every permission of that role, and it
 * changes or removes only members whose every permission there it holds.
 */
import { AppError } from '@iam/platform';
import { type Actor, rightsOf } from '../domain/authorization';
import { type MembershipGrant, ORG_ADMIN_ROLE, type Organization, type OrganizationRole, type OrganizationStores } from '../domain/organizations';
import type { Stores } from '../domain/ports';

export const ORGANIZATIONS_MANAGE = 'organizations.manage';

export type OrgAccess = { readonly platform: true; readonly organization: Organization } | { readonly platform: false; readonly organization: Organization; readonly grant: MembershipGrant };

export const organizationNotFound = (): AppError => AppError.notFound('The organization does not exist.');

type AccessStores = Pick<OrganizationStores, 'organizations' | 'members'> & Pick<Stores, 'principals'>;

/** Whether the actor administers every organization (the platform's permission, now). */
export async function isPlatformAdmin(s: Pick<Stores, 'principals'>, actor: Actor): Promise<boolean> {
  const rights = rightsOf(await s.principals.findById(actor.userId));
  return rights.administrator || rights.permissions.has(ORGANIZATIONS_MANAGE);
}

/**
 * The actor's access to one organization: `delegated` says whether an org.admin of it may do
 * what is asked (members, invitations, their roles); otherwise only the platform may.
 */
export async function accessTo(s: AccessStores, actor: Actor, organizationId: string, opts: { delegated: boolean; lock?: boolean }): Promise<OrgAccess> {
  const platform = await isPlatformAdmin(s, actor);
  const organization = await s.organizations.findById(organizationId, opts.lock ? { forShare: true } : {});
  if (!organization) throw organizationNotFound();
  if (platform) return { platform: true, organization };
  const grant = await s.members.grant(organizationId, actor.userId);
  if (!grant) throw organizationNotFound();
  if (!opts.delegated || !grant.roles.includes(ORG_ADMIN_ROLE)) {
    throw AppError.forbidden(opts.delegated ? `Only a member holding ${ORG_ADMIN_ROLE} may manage this organization.` : 'Only the platform may change this of an organization.');
  }
  return { platform: false, organization, grant };
}

const lacking = (held: readonly string[], wanted: readonly string[]): string[] => wanted.filter((p) => !held.includes(p));

/** A delegated administrator assigns an organization role only if it holds all its permissions there. */
export function assertMayAssignOrgRoles(access: OrgAccess, added: readonly OrganizationRole[]): void {
  if (access.platform) return;
  for (const role of added) {
    const missing = lacking(access.grant.permissions, role.permissions);
    if (missing.length > 0) throw AppError.forbidden(`You may assign the organization role ${role.name} only if you hold all its permissions here (missing: ${missing.join(', ')}).`);
  }
}

/** A delegated administrator changes or removes only members whose every permission there it holds. */
export function assertMayManageMember(access: OrgAccess, target: MembershipGrant): void {
  if (access.platform) return;
  const missing = lacking(access.grant.permissions, target.permissions);
  if (missing.length > 0) throw AppError.forbidden(`Only a member holding every permission of this member here may change it (missing: ${missing.join(', ')}).`);
}
