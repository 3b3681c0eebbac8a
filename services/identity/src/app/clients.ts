/**
 * The OAuth client registry's use cases (DESIGN §5 "Clients"): list, read, create, update, delete
 * and rotate a secret. Every change commits with its `identity.client.*` event (the outbox; the
 * audit trail records it with the actor) in one transaction. A confidential client's secret is 32
 * random bytes, answered once; only its SHA-256 is kept.
 *
 * Who may do what (DESIGN §3, app/client-rights.ts): the gateway lets only `clients.manage` holders
 * in; here every write checks it again against the actor's rights as the directory holds them now,
 * and a non-Administrator may give a client only roles whose every permission it holds (never
 * `Administrator`) and list as its API permissions only permissions it holds, and may change,
 * delete or rotate the secret of only a client whose every role and API permission it could give
 * (a secret is the client's powers).
 *
 * The grants users gave a client are part of its power (DESIGN §5 decision, README "OAuth
 * clients"): a change that could let a new party receive its codes or tokens (newReceivers: a
 * redirect URI added, the type changed, the device code grant turned on) and every secret
 * rotation end all of them in the change's transaction (endGrants), so users consent again.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS, type eventsV1 } from '@iam/contracts';
import { AppError, type InTransaction, clientTokensSubject, event, randomToken, sha256 } from '@iam/platform';
import { type GivenClientSettings, checkClientSettings, newReceivers } from '../domain/client-rules';
import type { ClientListQuery, ClientPage, ClientRecord, ClientSettings, ClientStore } from '../domain/clients';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';
import type { SessionStores } from './auth';
import { type ClientActor, clientRights } from './client-rights';

export { CLIENTS_MANAGE, type ClientActor } from './client-rights';

/** A settings change: fields given replace, fields absent stay. */
export type ClientPatch = Partial<GivenClientSettings>;

export interface ClientWithSecret {
  readonly client: ClientRecord;
  /** A confidential client's new secret (create, rotate, made confidential); never stored. */
  readonly clientSecret?: string;
}

export interface ClientUseCases {
  list(query: ClientListQuery): Promise<ClientPage>;
  /** NOT_FOUND for an unknown id, and a deleted one unless `includeDeleted`. */
  get(clientId: string, opts?: { includeDeleted?: boolean }): Promise<ClientRecord>;
  create(actor: ClientActor, input: GivenClientSettings): Promise<ClientWithSecret>;
  update(actor: ClientActor, clientId: string, patch: ClientPatch): Promise<ClientWithSecret>;
  /** Soft delete; its grants (identity.client.deleted) and its access tokens (subject revocation) end. */
  remove(actor: ClientActor, clientId: string): Promise<void>;
  /** A new secret; the old one stops at once, and every grant users gave the client ends. CONFLICT for a public client. */
  rotateSecret(actor: ClientActor, clientId: string): Promise<ClientWithSecret>;
}

type ClientStores = Pick<IdentityStores, 'clients' | 'providerGrants'> & SessionStores;

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
    apiPermissions: [...c.apiPermissions],
    idTokenSignedResponseAlg: c.idTokenSignedResponseAlg,
    userinfoSignedResponseAlg: c.userinfoSignedResponseAlg ?? '',
    resourceServer: c.resourceServer,
  };
}

const SETTINGS_FIELDS = [
  'name',
  'type',
  'redirectUris',
  'postLogoutRedirectUris',
  'grantTypes',
  'roles',
  'requirePar',
  'dpopBound',
  'apiPermissions',
  'idTokenSignedResponseAlg',
  'userinfoSignedResponseAlg',
  'resourceServer',
] as const;

const settingsOf = (c: ClientSettings): ClientSettings => ({
  name: c.name,
  type: c.type,
  redirectUris: c.redirectUris,
  postLogoutRedirectUris: c.postLogoutRedirectUris,
  grantTypes: c.grantTypes,
  roles: c.roles,
  requirePar: c.requirePar,
  dpopBound: c.dpopBound,
  apiPermissions: c.apiPermissions,
  idTokenSignedResponseAlg: c.idTokenSignedResponseAlg,
  userinfoSignedResponseAlg: c.userinfoSignedResponseAlg,
  resourceServer: c.resourceServer,
});

const lowerSet = (xs: readonly string[]) => new Set(xs.map((x) => x.toLowerCase()));

const builtInConflict = (c: ClientRecord) => AppError.conflict(`The client "${c.clientId}" is built in (from the configuration) and cannot be changed through the API.`);

export function createClientUseCases(deps: {
  uow: UnitOfWork<ClientStores>;
  /** Reads outside any transaction. */
  clients: ClientStore;
  directory: Pick<Directory, 'principal' | 'resolveRoles' | 'resolvePermissions'>;
  /** Ends a subject's tokens in the caller's transaction (AuthUseCases.endSessionsIn). */
  endSessionsIn: (tx: InTransaction<SessionStores>, subject: string, at: Date) => Promise<number>;
}): ClientUseCases {
  const { uow, clients } = deps;
  const rights = clientRights(deps.directory);

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
      const held = await rights.of(actor);
      const s = checkClientSettings(input);
      if (s.resourceServer) rights.assertMayMakeResourceServer(held);
      const roles = await rights.roles(s.roles);
      rights.assertMayGive(held, roles, 'give roles to');
      const apiPermissions = await rights.permissions(s.apiPermissions);
      rights.assertMayList(held, apiPermissions, 'give API permissions to');
      const settings: ClientSettings = { ...s, roles: roles.map((r) => r.name), apiPermissions };
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
      const held = await rights.of(actor);
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      const s = checkClientSettings({ ...settingsOf(current), ...defined });
      const roles = await rights.roles(s.roles);
      // Acting on a client is acting with its powers; giving roles or API permissions, granting them.
      await rights.assertMayActOn(held, current, 'change');
      if (s.resourceServer) rights.assertMayMakeResourceServer(held);
      rights.assertMayGive(held, roles, 'give roles to');
      // The API permissions it keeps stay as they are (one deleted since carries nothing); added ones must exist and be held.
      const kept = lowerSet(current.apiPermissions);
      const added = await rights.permissions(s.apiPermissions.filter((p) => !kept.has(p.toLowerCase())));
      rights.assertMayList(held, added, 'give API permissions to');
      const canonical = new Map(added.map((p) => [p.toLowerCase(), p]));
      const storedAs = new Map(current.apiPermissions.map((p) => [p.toLowerCase(), p]));
      const apiPermissions = s.apiPermissions.map((p) => storedAs.get(p.toLowerCase()) ?? canonical.get(p.toLowerCase()) ?? p);
      const settings: ClientSettings = { ...s, roles: roles.map((r) => r.name), apiPermissions };
      const madeConfidential = current.type === 'public' && settings.type === 'confidential';
      const madePublic = current.type === 'confidential' && settings.type === 'public';
      const secret = madeConfidential ? randomToken(32) : undefined;
      const changed: string[] = SETTINGS_FIELDS.filter((f) => JSON.stringify(settings[f]) !== JSON.stringify(current[f]));
      if (changed.length === 0) return { client: current };
      const lower = lowerSet(settings.roles);
      // Fewer powers (a role or the client_credentials grant taken away, or made public): its current tokens end now.
      const reduced =
        current.roles.some((r) => !lower.has(r.toLowerCase())) ||
        (current.grantTypes.includes('client_credentials') && !settings.grantTypes.includes('client_credentials')) ||
        madePublic;
      // A new party could receive its codes or tokens: the grants users gave it end with the change.
      const repointed = newReceivers(current, settings).length > 0;
      // A smaller ceiling: the API tokens its users hold stop now (their next refresh carries what is left).
      const ceiling = lowerSet(settings.apiPermissions);
      const narrowed = current.apiPermissions.some((p) => !ceiling.has(p.toLowerCase()));
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
        if (narrowed && !repointed) await deps.endSessionsIn(tx, clientTokensSubject(clientId), at);
        return updated;
      });
      return { client, clientSecret: secret };
    },

    async remove(actor, clientId) {
      const current = await clients.get(clientId);
      if (!current) throw AppError.notFound('The client does not exist.');
      if (current.builtIn) throw builtInConflict(current);
      await rights.assertMayActOn(await rights.of(actor), current, 'delete');
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
      await rights.assertMayActOn(await rights.of(actor), current, 'rotate the secret of');
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
