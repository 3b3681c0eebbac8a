/**
 * SCIM Users of an organization: platform users its connections provisioned, members of it.
 * Creating one makes a new platform account (no password: it signs in through the organization's
 * identity provider or resets one) and its membership; an existing account's email is a 409
 * `uniqueness` (a connection never takes over an account it did not make). A created or changed
 * email must be on one of the organization's verified domains (checkOwnDomain), else a 400
 * `invalidValue` naming `emails`, before the account is written. `active: false`
 * disables the account (`users.disabled_at`: no sign-in, no refresh, no organization grant) and
 * ends its sessions through the `directory.user.updated` event (`changedFields: active`), as a
 * password change does. DELETE removes the membership; an account left in no organization is
 * deleted (`directory.user.deleted`), one still in another organization stays there.
 * Every write publishes the same events as the REST API, with the connection as the actor.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { event, isUuid } from '@iam/platform';
import { ORG_ADMIN_ROLE } from '../../domain/organizations';
import type { ScimUserRow } from '../../domain/scim';
import { ScimError } from '../../domain/scim-error';
import { Violations, checkEmail, checkName } from '../../domain/rules';
import { USER_ATTRIBUTES } from '../../infra/scim-attributes';
import { emailDomain } from '../domains';
import { membershipEvent } from '../organizations';
import { NO_PASSWORD } from '../provisioning';
import { userChanged } from '../users';
import { applyPatch } from './patch';
import { listQuery, listResponse, project } from './query';
import { type Json, type UserInput, readUser, toScimUser } from './resources';
import { type ScimDeps, type ScimResourceType, type ScimResult, type ScimScope, type ScimTx, checkIfMatch } from './scope';

const userNotFound = () => ScimError.notFound('The user does not exist in this organization.');

/** The platform's fields of a SCIM user, checked (a 400 `invalidValue` names the attribute). */
function platformFields(input: UserInput): { email: string; firstName: string; lastName: string } {
  const v = new Violations();
  const email = checkEmail(v, 'emails', input.email);
  const local = email.split('@')[0] ?? email;
  const displayName = typeof input.attributes.displayName === 'string' ? input.attributes.displayName : undefined;
  const firstName = checkName(v, 'name.givenName', input.givenName ?? displayName ?? local);
  const lastName = checkName(v, 'name.familyName', input.familyName ?? '-');
  v.throwIfAny();
  return { email, firstName, lastName };
}

/**
 * A connection provisions addresses of its organization's verified domains only: no squatting an
 * address the organization does not own (an account kept a member after its real owner recovers
 * it), and no 409 telling it that an account exists elsewhere on the platform. Checked in the
 * transaction of the write; the domain's row stays locked FOR SHARE until it commits.
 */
async function checkOwnDomain(tx: ScimTx, scope: ScimScope, email: string): Promise<void> {
  if (await tx.domains.isVerified(scope.organization.id, emailDomain(email))) return;
  const v = new Violations();
  v.add('emails', "must be on one of the organization's verified domains");
  v.throwIfAny();
}

/** The Users resource type: the operations every SCIM resource type has (`ScimResourceType`). */
export type ScimUsers = ScimResourceType;


async function findRow(tx: Pick<ScimTx, 'scimUsers'>, scope: ScimScope, id: string, forUpdate = false): Promise<ScimUserRow> {
  if (!isUuid(id)) throw userNotFound();
  const row = await tx.scimUsers.find(scope.organization.id, id.toLowerCase(), { forUpdate });
  if (!row) throw userNotFound();
  return row;
}

const answer = (row: ScimUserRow, scope: ScimScope, status = 200): ScimResult => {
  const body = toScimUser(row, scope.base);
  return { status, body, etag: (body.meta as Json).version as string, location: `${scope.base}/Users/${row.userId}` };
};

/** Applies a whole User document to a provisioned member (PUT, and PATCH after its operations). */
async function applyUser(tx: ScimTx, scope: ScimScope, row: ScimUserRow, input: UserInput): Promise<ScimUserRow> {
  const f = platformFields(input);
  const before = (await tx.users.findById(row.userId, { forUpdate: true }))!;
  const changed = (['email', 'firstName', 'lastName'] as const).filter((k) => f[k] !== before[k]);
  if (changed.includes('email')) await checkOwnDomain(tx, scope, f.email);
  const patch: Parameters<ScimTx['users']['update']>[1] = Object.fromEntries(changed.map((k) => [k, f[k]]));
  if (changed.includes('email')) patch.emailVerified = false;
  await tx.users.update(row.userId, patch);
  const fields: string[] = [...changed];
  if (changed.includes('email') && before.emailVerified) fields.push('emailVerified');
  if (input.active !== row.active) {
    await tx.scimUsers.setActive(row.userId, input.active);
    fields.push('active');
  }
  await tx.scimUsers.update(scope.organization.id, row.userId, { userName: input.userName, externalId: input.externalId, attributes: input.attributes });
  if (fields.length > 0) await tx.publish([event(SUBJECTS.userUpdated, userChanged((await tx.users.findById(row.userId))!, fields, before))]);
  return (await tx.scimUsers.find(scope.organization.id, row.userId))!;
}

export function createScimUsers(deps: ScimDeps): ScimUsers {
  return {
    async create(scope, body) {
      const input = readUser(body);
      const f = platformFields(input);
      const row = await deps.uow.run(async (tx) => {
        if (!(await tx.organizations.findById(scope.organization.id, { forShare: true }))) throw userNotFound();
        await checkOwnDomain(tx, scope, f.email);
        const id = randomUUID();
        await tx.users.insert({ id, ...f, phone: null, passwordHash: NO_PASSWORD });
        await tx.members.add(scope.organization.id, id);
        await tx.scimUsers.insert({ organizationId: scope.organization.id, userId: id, connectionId: scope.connection.id, userName: input.userName, externalId: input.externalId, attributes: input.attributes });
        if (!input.active) await tx.scimUsers.setActive(id, false);
        const user = (await tx.users.findById(id))!;
        const member = (await tx.members.find(scope.organization.id, id))!;
        await tx.publish([event(SUBJECTS.userCreated, userChanged(user)), membershipEvent(scope.organization, id, null, member, 'scim')]);
        return (await tx.scimUsers.find(scope.organization.id, id))!;
      });
      return answer(row, scope, 201);
    },

    async get(scope, id, params) {
      const r = answer(await findRow(deps.stores, scope, id), scope);
      return { ...r, body: project(r.body!, params) };
    },

    async replace(scope, id, body, ifMatch) {
      const input = readUser(body);
      const row = await deps.uow.run(async (tx) => {
        const current = await findRow(tx, scope, id, true);
        checkIfMatch(ifMatch, current.version);
        return applyUser(tx, scope, current, input);
      });
      return answer(row, scope);
    },

    async patch(scope, id, body, ifMatch) {
      const row = await deps.uow.run(async (tx) => {
        const current = await findRow(tx, scope, id, true);
        checkIfMatch(ifMatch, current.version);
        const patched = applyPatch(toScimUser(current, scope.base), body);
        return applyUser(tx, scope, current, readUser(patched));
      });
      return answer(row, scope);
    },

    async remove(scope, id, ifMatch) {
      await deps.uow.run(async (tx) => {
        const current = await findRow(tx, scope, id, true);
        checkIfMatch(ifMatch, current.version);
        const before = (await tx.members.find(scope.organization.id, current.userId, { forUpdate: true }))!;
        if (before.roles.includes(ORG_ADMIN_ROLE)) {
          const admins = await tx.members.lockAdmins(scope.organization.id);
          if (admins.length === 1 && admins[0] === current.userId) throw new ScimError(409, `The last ${ORG_ADMIN_ROLE} of an organization cannot be removed.`);
        }
        await tx.members.remove(scope.organization.id, current.userId);
        const events = [membershipEvent(scope.organization, current.userId, before, null, 'scim')];
        if ((await tx.scimUsers.organizationsOf(current.userId)) === 0) {
          const user = (await tx.users.findById(current.userId, { forUpdate: true }))!;
          if (!user.roles.length && (await tx.users.softDelete(current.userId))) events.push(event(SUBJECTS.userDeleted, userChanged(user)));
        }
        await tx.publish(events);
      });
      return { status: 204 };
    },

    async list(scope, params) {
      const { query, startIndex } = listQuery(params, USER_ATTRIBUTES);
      const page = await deps.stores.scimUsers.list(scope.organization.id, query);
      return { status: 200, body: listResponse(page.items.map((r) => project(toScimUser(r, scope.base), params)), page.totalResults, startIndex) };
    },
  };
}

