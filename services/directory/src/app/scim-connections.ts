/**
 * SCIM connections (issue #42): an organization's SCIM clients, made and revoked by the platform
 * (organizations.manage) or the organization's own org.admin holders (organization-access.ts).
 * The bearer token is 32 random bytes, returned once; only its SHA-256 is stored. A connection
 * acts only on its own organization (every SCIM statement carries its organization's id).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import type { Actor } from '../domain/authorization';
import type { OrgUseCaseStores } from '../domain/organizations';
import type { UnitOfWork } from '../domain/ports';
import { Violations, checkId, checkName } from '../domain/rules';
import type { ScimConnection, ScimStores } from '../domain/scim';
import { tokenHash } from './invitations';
import { accessTo } from './organization-access';

export type ScimConnectionStores = OrgUseCaseStores & ScimStores;

export interface ScimConnectionDeps {
  readonly uow: UnitOfWork<ScimConnectionStores>;
  readonly stores: ScimConnectionStores;
}

/** A token's prefix: recognisable in a secret scanner and in logs that must not hold it. */
export const SCIM_TOKEN_PREFIX = 'iamscim_';

export interface ScimConnectionUseCases {
  create(actor: Actor, organizationId: string, input: { name: string }): Promise<{ connection: ScimConnection; token: string }>;
  list(actor: Actor, organizationId: string, query: { page: number; pageSize: number }): Promise<{ items: ScimConnection[]; totalCount: number }>;
  revoke(actor: Actor, organizationId: string, id: string): Promise<void>;
  /** The live connection this bearer token is of (its organization is the caller's to compare); null for any other token. */
  authenticate(token: string): Promise<ScimConnection | null>;
}

const connectionEvent = (subject: typeof SUBJECTS.scimConnectionCreated | typeof SUBJECTS.scimConnectionRevoked, c: ScimConnection) =>
  event(subject, { connectionId: c.id, organizationId: c.organizationId, name: c.name });

export function createScimConnectionUseCases(deps: ScimConnectionDeps): ScimConnectionUseCases {
  return {
    async create(actor, organizationId, input) {
      checkId(organizationId, 'organizationId');
      const v = new Violations();
      const name = checkName(v, 'name', input.name);
      v.throwIfAny();
      return deps.uow.run(async (tx) => {
        await accessTo(tx, actor, organizationId, { delegated: true, lock: true });
        const id = randomUUID();
        const token = SCIM_TOKEN_PREFIX + randomBytes(32).toString('base64url');
        await tx.scimConnections.insert({ id, organizationId, name, tokenHash: tokenHash(token), createdBy: actor.userId });
        const connection = (await tx.scimConnections.find(organizationId, id))!;
        await tx.publish([connectionEvent(SUBJECTS.scimConnectionCreated, connection)]);
        return { connection, token };
      });
    },

    async list(actor, organizationId, query) {
      checkId(organizationId, 'organizationId');
      await accessTo(deps.stores, actor, organizationId, { delegated: true });
      return deps.stores.scimConnections.list(organizationId, { page: Math.max(1, query.page), pageSize: Math.min(100, Math.max(1, query.pageSize)) });
    },

    async revoke(actor, organizationId, id) {
      checkId(organizationId, 'organizationId');
      checkId(id);
      await deps.uow.run(async (tx) => {
        await accessTo(tx, actor, organizationId, { delegated: true, lock: true });
        const found = await tx.scimConnections.find(organizationId, id);
        if (!found || !(await tx.scimConnections.revoke(organizationId, id))) throw AppError.notFound('The SCIM connection does not exist.');
        await tx.publish([connectionEvent(SUBJECTS.scimConnectionRevoked, found)]);
      });
    },

    async authenticate(token) {
      if (!token.startsWith(SCIM_TOKEN_PREFIX) || token.length > 200) return null;
      return deps.stores.scimConnections.authenticate(tokenHash(token));
    },
  };
}
