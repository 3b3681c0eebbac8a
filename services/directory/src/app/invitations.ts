/**
 * Invitations to an organization (issue #41): single use, bound to the invited email, expiring
 * (ORG_INVITATION_DAYS, 7 by default), sent by the platform or the organization's org.admin
 * holders (who may offer only roles whose permissions they hold there). Inviting a member is a
 * 409; inviting an address with a pending invitation sends that invitation again (a new token
 * and expiry, the same invitation), never a second one. The raw token leaves only sealed in the
 * `directory.organization.invitation.sent` event (notification mails it); only its SHA-256 is stored.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, seal } from '@iam/platform';
import type { Actor } from '../domain/authorization';
import type { Invitation, MemberQuery, Organization, OrgUseCaseStores } from '../domain/organizations';
import type { Page } from '../domain/model';
import type { UnitOfWork } from '../domain/ports';
import { Violations, checkEmail, checkId } from '../domain/rules';
import { accessTo, assertMayAssignOrgRoles } from './organization-access';
import { membershipEvent, rolesNamed } from './organizations';

export interface InvitationDeps {
  readonly uow: UnitOfWork<OrgUseCaseStores>;
  readonly stores: OrgUseCaseStores;
  readonly sealKey?: Buffer;
  readonly days: number;
}

export interface InvitationUseCases {
  invite(actor: Actor, organizationId: string, input: { email: string; roles: readonly string[] }): Promise<Invitation>;
  list(actor: Actor, organizationId: string, query: MemberQuery): Promise<Page<Invitation>>;
  get(actor: Actor, organizationId: string, id: string): Promise<Invitation>;
  revoke(actor: Actor, organizationId: string, id: string): Promise<void>;
  /** The signed-in user accepts: its email must be the invited one; the token then works no more. */
  accept(actor: Actor, token: string): Promise<{ organizationId: string; roles: readonly string[] }>;
}

export const tokenHash = (token: string): Buffer => createHash('sha256').update(token).digest();
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const notFound = () => AppError.notFound('The invitation does not exist.');
/** One answer for every token that cannot be used (unknown, used, revoked, expired, another address's). */
const unusable = () => AppError.validation('The invitation is invalid, used or expired, or was sent to another address.', [{ field: 'token', message: 'cannot be used' }]);

export function createInvitationUseCases(deps: InvitationDeps): InvitationUseCases {
  function sentEvent(o: Organization, inv: { id: string; email: string; roles: readonly string[]; expiresAt: Date }, token: string, resent: boolean) {
    const eventId = randomUUID();
    const sealedToken = deps.sealKey ? seal(deps.sealKey, token, eventId).toString('base64url') : '';
    return event(
      SUBJECTS.organizationInvitationSent,
      { invitationId: inv.id, organizationId: o.id, organizationName: o.name, email: inv.email, roles: [...inv.roles], sealedToken, expiresAt: inv.expiresAt, resent },
      eventId,
    );
  }

  return {
    async invite(actor, organizationId, input) {
      checkId(organizationId, 'organizationId');
      const v = new Violations();
      const email = checkEmail(v, 'email', input.email);
      v.throwIfAny();
      return deps.uow.run(async (tx) => {
        const access = await accessTo(tx, actor, organizationId, { delegated: true, lock: true });
        const roles = await rolesNamed(tx, 'roles', input.roles);
        assertMayAssignOrgRoles(access, roles);
        const existing = await tx.members.findByEmail(organizationId, email);
        if (existing) throw AppError.conflict('The address belongs to a member of the organization already.', [{ field: 'email', message: 'is a member already' }]);
        const token = randomBytes(32).toString('base64url');
        const expiresAt = new Date(Date.now() + deps.days * 86_400_000);
        const pending = await tx.invitations.findPending(organizationId, email);
        const roleIds = roles.map((r) => r.id);
        let id: string;
        if (pending) {
          id = pending.id;
          await tx.invitations.renew(organizationId, id, { roleIds, tokenHash: tokenHash(token), expiresAt });
        } else {
          id = randomUUID();
          await tx.invitations.insert({ id, organizationId, email, roleIds, tokenHash: tokenHash(token), invitedBy: actor.userId, expiresAt });
        }
        const inv = (await tx.invitations.find(organizationId, id))!;
        await tx.publish([sentEvent(access.organization, inv, token, pending !== null)]);
        return inv;
      });
    },

    async list(actor, organizationId, query) {
      checkId(organizationId, 'organizationId');
      await accessTo(deps.stores, actor, organizationId, { delegated: true });
      return deps.stores.invitations.list(organizationId, query);
    },

    async get(actor, organizationId, id) {
      checkId(organizationId, 'organizationId');
      checkId(id);
      await accessTo(deps.stores, actor, organizationId, { delegated: true });
      const inv = await deps.stores.invitations.find(organizationId, id);
      if (!inv) throw notFound();
      return inv;
    },

    async revoke(actor, organizationId, id) {
      checkId(organizationId, 'organizationId');
      checkId(id);
      await deps.uow.run(async (tx) => {
        const access = await accessTo(tx, actor, organizationId, { delegated: true, lock: true });
        const inv = await tx.invitations.find(organizationId, id);
        if (!inv || !(await tx.invitations.revoke(organizationId, id))) throw notFound();
        const o = access.organization;
        await tx.publish([
          event(SUBJECTS.organizationInvitationRevoked, { invitationId: id, organizationId: o.id, organizationName: o.name, email: inv.email, roles: [...inv.roles], sealedToken: '', expiresAt: inv.expiresAt, resent: false }),
        ]);
      });
    },

    async accept(actor, token) {
      if (!TOKEN_RE.test(token)) throw unusable();
      return deps.uow.run(async (tx) => {
        const inv = await tx.invitations.findByToken(tokenHash(token));
        if (!inv || inv.status !== 'pending') throw unusable();
        const user = await tx.users.findById(actor.userId, { forUpdate: true });
        if (!user || user.email !== inv.email) throw unusable();
        const o = await tx.organizations.findById(inv.organizationId, { forShare: true });
        if (!o || !(await tx.invitations.markAccepted(o.id, inv.id, user.id))) throw unusable();
        const before = await tx.members.find(o.id, user.id, { forUpdate: true });
        if (!before) await tx.members.add(o.id, user.id);
        const roleIds = [...new Set([...(before ? (await tx.organizationRoles.findLiveByNames(before.roles)).map((r) => r.id) : []), ...inv.roleIds])];
        await tx.members.setRoles(o.id, user.id, roleIds);
        const after = (await tx.members.find(o.id, user.id))!;
        await tx.publish([membershipEvent(o, user.id, before, after, 'invitation')]);
        return { organizationId: o.id, roles: after.roles };
      });
    },
  };
}
