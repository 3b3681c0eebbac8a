/**
 * The OAuth client registry's use cases (DESIGN §5 "Clients"): list, read, create, update, delete
 * and rotate a secret. Every change commits with its `identity.client.*` event (the outbox; the
 * audit trail records it with the actor) in one transaction. A confidential client's secret is 32
 * random bytes, answered once; only its SHA-256 is kept.
 *
 * Who may do what (DESIGN §3): the gateway lets only `clients.manage` holders in; here every write
 * checks it again against the actor's rights as the directory holds them now, and a non-Administrator may give a client only
 * roles whose every permission it holds, never `Administrator`, and may change, delete or rotate
 * the secret of only a client whose every role it could give (a secret is the client's powers).
 *
 * The grants users gave a client are part of its power (DESIGN §5 decision, README "OAuth
 * clients"): a change that could let a new party receive its codes or tokens (newReceivers: a
 * redirect URI added, the type changed, the device code grant turned on) and every secret
 * rotation end all of them in the change's transaction (endGrants), so users consent again.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS, type eventsV1 } from '@iam/contracts';
import { AppError, type InTransaction, clientTokensSubject, event, randomToken, sha256 } from '@iam/platform';
import { checkClientSettings, newReceivers } from '../domain/client-rules';
import type { ClientListQuery, ClientPage, ClientRecord, ClientSettings, ClientStore } from '../domain/clients';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';
import type { SessionStores } from './auth';

export const ADMINISTRATOR_ROLE = 'Administrator';
export const CLIENTS_MANAGE = 'clients.manage';

/** The user a change acts for (the gateway's verified token `sub`, named in the call's assertion). */
export interface ClientActor {
  readonly userId: string;
}

/** A settings change: fields given replace, fields absent stay. */
export type ClientPatch = Partial<Omit<ClientSettings, 'type' | 'grantTypes'> & { type: string; grantTypes: readonly string[] }>;

export interface ClientWithSecret {
  readonly client: ClientRecord;
  /** A confidential client's new secret (create, rotate, made confidential); never stored. */
  readonly clientSecret?: string;
}

export interface ClientUseCases {
  list(query: ClientListQuery): Promise<ClientPage>;
  /** NOT_FOUND for an unknown id, and a deleted one unless `includeDeleted`. */
  get(clientId: string, opts?: { includeDeleted?: boolean }): Promise<ClientRecord>;
  create(actor: ClientActor, input: Omit<ClientSettings, 'type' | 'grantTypes'> & { type: string; grantTypes: readonly string[] }): Promise<ClientWithSecret>;
  update(actor: ClientActor, clientId: string, patch: ClientPatch): Promise<ClientWithSecret>;
  /** Soft delete; its grants (identity.client.deleted) and its access tokens (subject revocation) end. */
  remove(actor: ClientActor, clientId: string): Promise<void>;
  /** A new secret; the old one stops at once. CONFLICT for a public client. */
  rotateSecret(actor: ClientActor, clientId: string): Promise<ClientWithSecret>;
}

type ClientStores = Pick<IdentityStores, 'clients' | 'providerGrants'> & SessionStores;

interface Rights {
  readonly administrator: boolean;
  readonly permissions: ReadonlySet<string>;
}

/** A client's settings as events carry them (never the secret or its hash). */
function clientState(c: ClientSettings): eventsV1.ClientState {
  return {
    name: c.name,
    type: c.type,
    redirectUris: [...c.redirectUris],
    postLogoutRedirectUris: [...c.postLogoutRedirectUris],
    grantTypes: [...c.grantTypes],
    roles: [...c.roles],
    requirePar: c.requirePar,
    dpopBound: c.dpopBound,
  };
}

const SETTINGS_FIELDS = ['name', 'type', 'redirectUris', 'postLogoutRedirectUris', 'grantTypes', 'roles', 'requirePar', 'dpopBound'] as const;

const settingsOf = (c: ClientSettings): ClientSettings => ({
  name: c.name,
  type: c.type,
  redirectUris: c.redirectUris,
  postLogoutRedirectUris: c.postLogoutRedirectUris,
  grantTypes: c.grantTypes,
  roles: c.roles,
  requirePar: c.requirePar,
  dpopBound: c.dpopBound,
});

const builtInConflict = (c: ClientRecord) => AppError.conflict(`The client "${c.clientId}" is built in (from the configuration) and cannot be changed through the API.`);

export function createClientUseCases(deps: {
  uow: UnitOfWork<ClientStores>;
  /** Reads outside any transaction. */
  clients: ClientStore;
  directory: Pick<Directory, 'principal' | 'resolveRoles'>;
  /** Ends a subject's tokens in the caller's transaction (AuthUseCases.endSessionsIn). */
  endSessionsIn: (tx: InTransaction<SessionStores>, subject: string, at: Date) => Promise<number>;
}): ClientUseCases {
  const { uow, clients, directory } = deps;

  /**
   * The actor's rights as the directory holds them now; FORBIDDEN unless they include
   * clients.manage (a manager demoted since their token was issued writes nothing).
   */
  async function rightsOf(actor: ClientActor): Promise<Rights> {
    const p = await directory.principal(actor.userId);
    const rights = p ? { administrator: p.roles.includes(ADMINISTRATOR_ROLE), permissions: new Set(p.permissions) } : { administrator: false, permissions: new Set<string>() };
    if (!rights.administrator && !rights.permissions.has(CLIENTS_MANAGE)) throw AppError.forbidden(`Managing OAuth clients needs the ${CLIENTS_MANAGE} permission.`);
    return rights;
  }

  /** The roles as the directory names them (canonical case); VALIDATION on `roles` for unknown ones. */
  async function resolveRoles(names: readonly string[]): Promise<Array<{ name: string; permissions: string[] }>> {
    if (names.length === 0) return [];
    const found = await directory.resolveRoles(names);
    const byLower = new Map(found.map((r) => [r.name.toLowerCase(), r]));
    const unknown = names.filter((n) => !byLower.has(n.toLowerCase()));
    if (unknown.length > 0) {
      throw AppError.validation('Unknown role.', [{ field: 'roles', message: `unknown role(s): ${unknown.map((n) => JSON.stringify(n)).join(', ')}` }]);
    }
    return names.map((n) => byLower.get(n.toLowerCase())!);
  }

  /** FORBIDDEN unless the actor may hold (give, or act with) every one of these roles. */
  function assertMayHold(rights: Rights, roles: ReadonlyArray<{ name: string; permissions: readonly string[] }>, what: string): void {
    if (rights.administrator) return;
    if (roles.some((r) => r.name === ADMINISTRATOR_ROLE)) throw AppError.forbidden(`Only an Administrator may ${what} a client with the Administrator role.`);
    const missing = [...new Set(roles.flatMap((r) => r.permissions.filter((p) => !rights.permissions.has(p))))];
    if (missing.length > 0) throw AppError.forbidden(`Only a caller holding every permission of the client's roles may ${what} it (missing: ${missing.join(', ')}).`);
  }

  /** The actor's rights, checked against the roles a client has (to act on it) or is given. */
  async function authorize(actor: ClientActor, roles: readonly string[], what: string): Promise<void> {
    const rights = await rightsOf(actor);
    if (roles.length === 0) return;
    // The roles of a stored client may have been deleted since: only the live ones carry powers.
    assertMayHold(rights, await directory.resolveRoles(roles), what);
  }

  /**
   * Ends every grant users gave the client, in the caller's transaction: their consents, codes,
   * refresh tokens and device codes at the provider, and the API tokens they hold through it
   * (revoked under clientTokensSubject at every gateway). Answers how many consents ended.
   */
  async function endGrants(tx: InTransaction<ClientStores>, clientId: string, at: Date): Promise<number> {
    const { grants } = await tx.providerGrants.endClient(clientId);
    await deps.endSessionsIn(tx, clientTokensSubject(clientId), at);
    return grants;
  }

  async function live(tx: InTransaction<ClientStores>, clientId: string): Promise<ClientRecord> {
    const c = await tx.clients.get(clientId, { forUpdate: true });
    if (!c) throw AppError.notFound('The client does not exist.');
    if (c.builtIn) throw builtInConflict(c);
    return c;
  }

  return {
    list: (query) => clients.list(query),

    async get(clientId, opts = {}) {
      const c = await clients.get(clientId, { includeDeleted: opts.includeDeleted === true });
      if (!c) throw AppError.notFound('The client does not exist.');
      return c;
    },

    async create(actor, input) {
      const rights = await rightsOf(actor);
      const s = checkClientSettings(input);
      const roles = await resolveRoles(s.roles);
      assertMayHold(rights, roles, 'give roles to');
      const settings: ClientSettings = { ...s, roles: roles.map((r) => r.name) };
      const secret = settings.type === 'confidential' ? randomToken(32) : undefined;
      const client = await uow.run(async (tx) => {
        const c = await tx.clients.insert({ ...settings, clientId: randomUUID(), firstParty: false, secretHash: secret ? sha256(secret) : null });
        await tx.publish([event(SUBJECTS.clientCreated, { clientId: c.clientId, after: clientState(c), before: undefined, changedFields: [], grantsRevoked: false, grantsRevokedCount: 0 })]);
        return c;
      });
      return { client, clientSecret: secret };
    },

    async update(actor, clientId, patch) {
      const current = await clients.get(clientId);
      if (!current) throw AppError.notFound('The client does not exist.');
      if (current.builtIn) throw builtInConflict(current);
      const rights = await rightsOf(actor);
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      const s = checkClientSettings({ ...settingsOf(current), ...defined });
      const roles = await resolveRoles(s.roles);
      // Acting on a client is acting with its powers; giving roles, granting them.
      assertMayHold(rights, await directory.resolveRoles(current.roles), 'change');
      assertMayHold(rights, roles, 'give roles to');
      const settings: ClientSettings = { ...s, roles: roles.map((r) => r.name) };
      const madeConfidential = current.type === 'public' && settings.type === 'confidential';
      const madePublic = current.type === 'confidential' && settings.type === 'public';
      const secret = madeConfidential ? randomToken(32) : undefined;
      const changed: string[] = SETTINGS_FIELDS.filter((f) => JSON.stringify(settings[f]) !== JSON.stringify(current[f]));
      if (changed.length === 0) return { client: current };
      const lower = new Set(settings.roles.map((r) => r.toLowerCase()));
      // Fewer powers (a role or the client_credentials grant taken away, or made public): its current tokens end now.
      const reduced =
        current.roles.some((r) => !lower.has(r.toLowerCase())) ||
        (current.grantTypes.includes('client_credentials') && !settings.grantTypes.includes('client_credentials')) ||
        madePublic;
      // A new party could receive its codes or tokens: the grants users gave it end with the change.
      const repointed = newReceivers(current, settings).length > 0;
      const client = await uow.run(async (tx) => {
        const locked = await live(tx, clientId);
        if (locked.version !== current.version) throw AppError.conflict('The client was changed by another request; read it again and retry.');
        const updated = await tx.clients.update(clientId, locked.version, { ...settings, ...(secret ? { secretHash: sha256(secret) } : madePublic ? { secretHash: null } : {}) });
        if (!updated) throw AppError.conflict('The client was changed by another request; read it again and retry.');
        const fields = madeConfidential || madePublic ? [...changed, 'clientSecret'] : changed;
        const at = new Date();
        const revoked = repointed ? await endGrants(tx, clientId, at) : undefined;
        await tx.publish([
          event(SUBJECTS.clientUpdated, {
            clientId,
            after: clientState(updated),
            before: clientState(current),
            changedFields: fields,
            grantsRevoked: revoked !== undefined,
            grantsRevokedCount: revoked ?? 0,
          }),
        ]);
        if (reduced) await deps.endSessionsIn(tx, clientId, at);
        return updated;
      });
      return { client, clientSecret: secret };
    },

    async remove(actor, clientId) {
      const current = await clients.get(clientId);
      if (!current) throw AppError.notFound('The client does not exist.');
      if (current.builtIn) throw builtInConflict(current);
      await authorize(actor, current.roles, 'delete');
      await uow.run(async (tx) => {
        const c = await live(tx, clientId);
        await tx.clients.softDelete(clientId);
        await tx.publish([event(SUBJECTS.clientDeleted, { clientId, after: clientState(c), before: undefined, changedFields: [], grantsRevoked: false, grantsRevokedCount: 0 })]);
        // Its grants, codes and refresh tokens at the provider end in the same commit.
        await tx.providerGrants.endClient(clientId);
        // Its access tokens stop at every gateway: its own (a service account's sub is its client
        // id) and its users' (their client_id names it: revoked under clientTokensSubject).
        const at = new Date();
        await deps.endSessionsIn(tx, clientId, at);
        await deps.endSessionsIn(tx, clientTokensSubject(clientId), at);
      });
    },

    async rotateSecret(actor, clientId) {
      const current = await clients.get(clientId);
      if (!current) throw AppError.notFound('The client does not exist.');
      if (current.builtIn) throw builtInConflict(current);
      if (current.type !== 'confidential') throw AppError.conflict('A public client has no secret.');
      await authorize(actor, current.roles, 'rotate the secret of');
      const secret = randomToken(32);
      const client = await uow.run(async (tx) => {
        const c = await live(tx, clientId);
        if (c.type !== 'confidential' || !(await tx.clients.setSecretHash(clientId, sha256(secret)))) throw AppError.conflict('A public client has no secret.');
        // Whoever rotates holds the new secret: the grants users gave the client end with the old one.
        const revoked = await endGrants(tx, clientId, new Date());
        await tx.publish([
          event(SUBJECTS.clientSecretRotated, { clientId, after: clientState(c), before: undefined, changedFields: ['clientSecret'], grantsRevoked: true, grantsRevokedCount: revoked }),
        ]);
        return (await tx.clients.get(clientId))!;
      });
      return { client, clientSecret: secret };
    },
  };
}
