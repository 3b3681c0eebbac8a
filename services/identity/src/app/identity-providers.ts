/**
 * The upstream identity providers' use cases (issue #40 item 1): list, read, create, update and
 * delete. Every change commits with its `identity.identity_provider.*` event (the outbox; the audit
 * trail records it with the actor, and webhooks carry it) in one transaction. The client secret is
 * sealed under the key-encryption key (AAD names the provider) before it reaches the store, and no
 * answer or event carries it: an update that sets or clears it lists `clientSecret` as changed.
 *
 * Who may do what (DESIGN §3): the gateway lets only `identity-providers.manage` holders in; here
 * every write checks it again against the directory's current rights, and the provider's default
 * roles (given to every user it signs up) bind whoever sets them as assigning a role does: only
 * roles whose every permission the actor holds, never `Administrator` unless the actor is one. A
 * change or delete of a provider is acting with its powers, so the same holds for its current roles.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS, type eventsV1 } from '@iam/contracts';
import { ADMINISTRATOR_ROLE, AppError, event, isAdministrator } from '@iam/platform';
import type { IdentityProviderListQuery, IdentityProviderPage, IdentityProviderRecord, IdentityProviderSettings, IdentityProviderStore } from '../domain/identity-providers';
import { providerSecretAad } from '../domain/identity-providers';
import { type GivenProviderSettings, checkClientSecret, checkProviderSettings } from '../domain/identity-provider-rules';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';
import type { SealingKeys } from '../domain/sealing';

export const IDENTITY_PROVIDERS_MANAGE = 'identity-providers.manage';

export interface ProviderActor {
  readonly userId: string;
}

/** A change: fields given replace, fields absent stay; `clientSecret` "" removes it. */
export type ProviderPatch = Partial<GivenProviderSettings> & { clientSecret?: string };

export interface IdentityProviderUseCases {
  list(query: IdentityProviderListQuery): Promise<IdentityProviderPage>;
  get(id: string, opts?: { includeDeleted?: boolean }): Promise<IdentityProviderRecord>;
  create(actor: ProviderActor, input: GivenProviderSettings & { clientSecret: string }): Promise<IdentityProviderRecord>;
  update(actor: ProviderActor, id: string, patch: ProviderPatch): Promise<IdentityProviderRecord>;
  remove(actor: ProviderActor, id: string): Promise<void>;
}

const FIELDS = ['kind', 'name', 'displayName', 'discoveryUrl', 'clientId', 'scopes', 'claimMapping', 'trustEmailVerified', 'trustUpstreamMfa', 'allowSignUp', 'linking', 'defaultRoles', 'iconUrl', 'enabled'] as const;

/** A provider's settings as events carry them (never the secret). */
export function providerState(p: IdentityProviderSettings): eventsV1.IdentityProviderState {
  return {
    kind: p.kind,
    name: p.name,
    displayName: p.displayName,
    discoveryUrl: p.discoveryUrl ?? '',
    clientId: p.clientId,
    scopes: [...p.scopes],
    claimMapping: JSON.stringify(p.claimMapping),
    trustEmailVerified: p.trustEmailVerified,
    trustUpstreamMfa: p.trustUpstreamMfa,
    allowSignUp: p.allowSignUp,
    linking: p.linking,
    defaultRoles: [...p.defaultRoles],
    iconUrl: p.iconUrl,
    enabled: p.enabled,
  };
}

const settingsOf = (p: IdentityProviderRecord): GivenProviderSettings => ({
  kind: p.kind,
  name: p.name,
  displayName: p.displayName,
  discoveryUrl: p.discoveryUrl,
  clientId: p.clientId,
  scopes: p.scopes,
  claimMapping: p.claimMapping,
  trustEmailVerified: p.trustEmailVerified,
  trustUpstreamMfa: p.trustUpstreamMfa,
  allowSignUp: p.allowSignUp,
  linking: p.linking,
  defaultRoles: p.defaultRoles,
  iconUrl: p.iconUrl,
  enabled: p.enabled,
});

const nameTaken = () => AppError.conflict('An identity provider of that name exists.', [{ field: 'name', message: 'is already taken' }]);
const changedMeanwhile = () => AppError.conflict('The identity provider was changed by another request; read it again and retry.');

export function createIdentityProviderUseCases(deps: {
  uow: UnitOfWork<Pick<IdentityStores, 'identityProviders'>>;
  /** Reads outside any transaction. */
  providers: IdentityProviderStore;
  directory: Pick<Directory, 'principal' | 'resolveRoles'>;
  kek: SealingKeys;
}): IdentityProviderUseCases {
  const { uow, providers, directory, kek } = deps;

  async function rightsOf(actor: ProviderActor): Promise<{ administrator: boolean; permissions: ReadonlySet<string> }> {
    const p = await directory.principal(actor.userId);
    const rights = p ? { administrator: isAdministrator(p), permissions: new Set(p.permissions) } : { administrator: false, permissions: new Set<string>() };
    if (!rights.administrator && !rights.permissions.has(IDENTITY_PROVIDERS_MANAGE)) throw AppError.forbidden(`Managing identity providers needs the ${IDENTITY_PROVIDERS_MANAGE} permission.`);
    return rights;
  }

  /** The roles as the directory names them; VALIDATION for unknown ones, FORBIDDEN for one the actor may not give. */
  async function mayGive(rights: { administrator: boolean; permissions: ReadonlySet<string> }, names: readonly string[], what: string, field = true): Promise<string[]> {
    if (names.length === 0) return [];
    const roles = await directory.resolveRoles(names);
    const byLower = new Map(roles.map((r) => [r.name.toLowerCase(), r]));
    const missing = names.filter((n) => !byLower.has(n.toLowerCase()));
    if (missing.length > 0 && field) throw AppError.validation('Unknown role.', [{ field: 'defaultRoles', message: `unknown role(s): ${missing.map((n) => JSON.stringify(n)).join(', ')}` }]);
    const live = names.map((n) => byLower.get(n.toLowerCase())).filter((r) => r !== undefined);
    if (!rights.administrator) {
      if (live.some((r) => r.name === ADMINISTRATOR_ROLE)) throw AppError.forbidden(`Only an Administrator may ${what} a provider that gives the Administrator role.`);
      const lacking = [...new Set(live.flatMap((r) => r.permissions.filter((p) => !rights.permissions.has(p))))];
      if (lacking.length > 0) throw AppError.forbidden(`Only a caller holding every permission of the provider's default roles may ${what} it (missing: ${lacking.join(', ')}).`);
    }
    return live.map((r) => r.name);
  }

  const seal = (id: string, secret: string): Buffer | null => (secret === '' ? null : kek.seal(secret, providerSecretAad(id)));

  return {
    list: (query) => providers.list(query),

    async get(id, opts = {}) {
      const p = await providers.get(id, { includeDeleted: opts.includeDeleted === true });
      if (!p) throw AppError.notFound('The identity provider does not exist.');
      return p;
    },

    async create(actor, input) {
      const rights = await rightsOf(actor);
      const s = checkProviderSettings(input);
      const secret = checkClientSecret(input.clientSecret);
      const settings = { ...s, defaultRoles: await mayGive(rights, s.defaultRoles, 'create') };
      const id = randomUUID();
      return uow.run(async (tx) => {
        if (await tx.identityProviders.get(settings.name)) throw nameTaken();
        const p = await tx.identityProviders.insert({ ...settings, id, sealedSecret: seal(id, secret) });
        if (!p) throw nameTaken();
        await tx.publish([event(SUBJECTS.identityProviderCreated, { providerId: id, after: providerState(p), before: undefined, changedFields: [] })]);
        return p;
      });
    },

    async update(actor, id, patch) {
      const current = await providers.get(id);
      if (!current) throw AppError.notFound('The identity provider does not exist.');
      const rights = await rightsOf(actor);
      const { clientSecret, ...given } = patch;
      const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
      const s = checkProviderSettings({ ...settingsOf(current), ...defined });
      await mayGive(rights, current.defaultRoles, 'change', false);
      const settings = { ...s, defaultRoles: await mayGive(rights, s.defaultRoles, 'change') };
      const secret = clientSecret === undefined ? undefined : checkClientSecret(clientSecret);
      const changed: string[] = FIELDS.filter((f) => JSON.stringify(settings[f]) !== JSON.stringify(current[f]));
      if (secret !== undefined && (secret !== '' || current.hasClientSecret)) changed.push('clientSecret');
      if (changed.length === 0) return current;
      return uow.run(async (tx) => {
        const locked = await tx.identityProviders.get(id, { forUpdate: true });
        if (!locked || locked.version !== current.version) throw changedMeanwhile();
        if (settings.name !== current.name && (await tx.identityProviders.get(settings.name))) throw nameTaken();
        const updated = await tx.identityProviders.update(id, locked.version, { ...settings, ...(secret === undefined ? {} : { sealedSecret: seal(id, secret) }) });
        if (!updated) throw changedMeanwhile();
        await tx.publish([event(SUBJECTS.identityProviderUpdated, { providerId: id, after: providerState(updated), before: providerState(current), changedFields: changed })]);
        return updated;
      });
    },

    async remove(actor, id) {
      const current = await providers.get(id);
      if (!current) throw AppError.notFound('The identity provider does not exist.');
      await mayGive(await rightsOf(actor), current.defaultRoles, 'delete', false);
      await uow.run(async (tx) => {
        if (!(await tx.identityProviders.softDelete(id))) throw AppError.notFound('The identity provider does not exist.');
        await tx.publish([event(SUBJECTS.identityProviderDeleted, { providerId: id, after: providerState(current), before: undefined, changedFields: [] })]);
      });
    },
  };
}
