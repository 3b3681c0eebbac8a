/**
 * What the provider's access tokens carry beside the library's claims (its `extraTokenClaims`),
 * as REST tokens do: `email`, `roles`, `permissions`, how and when the user signed in (`amr`,
 * `acr`, `auth_time`) and identity's session id (`sid`, under which the token is recorded).
 *
 * - A service account (`client_credentials`): the permissions of the client's roles.
 * - The first-party console (`iam-console`): the user's roles and permissions, as a REST login.
 * - A third-party client (every registry client): only what the user delegated to it (DESIGN §5
 *   decision, services/identity/README.md "API permissions of third-party clients"):
 *   `permissions` = the API scopes of the token (granted by consent, within the client's
 *   ceiling) ∩ the permissions the user holds now (an Administrator holds all) ∩ the client's
 *   `apiPermissions` now; `roles: []`, so the Administrator role never travels through a
 *   third-party app. Made again at every refresh and for the device flow.
 *
 * An API token of an organization (organization-grant.ts: the organization-token grant, or a
 * request naming `organization:<slug>`) carries `org` and the member's permissions there instead.
 *
 * The opaque token of a code exchange without `resource` (a userinfo token, which the gateway
 * accepts too: README "A token from a standard code exchange") carries what an API JWT of the
 * same grant would: its rights come from the API scopes the grant holds among those asked (the
 * library gives the token itself only the OpenID scopes). It is recorded under its session like a
 * JWT, by the SHA-256 of its value (opaque-tokens.ts), so ending the session denylists it.
 */
import { isAdministrator } from '@iam/platform';
import type { Configuration, KoaContextWithOIDC, UnknownObject } from 'oidc-provider';
import type { ClientLookup, OAuthClient } from '../../domain/clients';
import type { Principal } from '../../domain/model';
import type { OrganizationGrants } from '../../app/organization-tokens';
import { opaqueTokenJti } from './opaque-tokens';
import { organizationClaimsOf } from './organization-grant';

type ExtraTokenClaims = NonNullable<Configuration['extraTokenClaims']>;
type Token = Parameters<ExtraTokenClaims>[1];

export interface TokenClaimsDeps {
  readonly clients: ClientLookup;
  /** The user behind a subject now; null when gone. */
  readonly principal: (userId: string) => Promise<Principal | null>;
  /** The permissions of a service account's roles. */
  readonly rolePermissions: (roles: readonly string[]) => Promise<string[]>;
  /** Identity's session of a provider session, and the record of a token it issues (OpSessionHooks). */
  readonly sessions?: {
    sessionId(opSessionUid: string): Promise<string | null>;
    tokenIssued(opSessionUid: string, record?: { jti: string; expiresAt: Date; clientId: string }): Promise<void>;
  };
  /** The access tokens' lifetime (their expiry when the library has not set it yet). */
  readonly accessTokenSeconds: number;
  /** The API's resource indicator (`{PUBLIC_URL}/api`): an opaque token's rights are the grant's scopes for it. */
  readonly apiResource: string;
  /** Membership (organization-grant.ts): an API token naming an organization carries its `org` claims instead of the user's platform rights. */
  readonly organizations?: Pick<OrganizationGrants, 'grant'>;
}

/**
 * The permissions a third-party client's token carries: its scopes that are in the client's
 * ceiling and that the user holds now (an Administrator holds every one), sorted.
 */
export function delegatedPermissions(scope: string | undefined, ceiling: readonly string[], user: Principal): string[] {
  const granted = new Set((scope ?? '').split(' ').filter(Boolean));
  const held = isAdministrator(user) ? null : new Set(user.permissions);
  return [...new Set(ceiling)].filter((p) => granted.has(p) && (held === null || held.has(p))).sort();
}

/** The rights a user's token carries through `client` (null: a client gone meanwhile, which gets none). */
export function userRights(token: { scope?: string | undefined }, client: OAuthClient | null, user: Principal): { roles: string[]; permissions: string[] } {
  if (client?.firstParty) return { roles: [...user.roles], permissions: [...user.permissions] };
  return { roles: [], permissions: client ? delegatedPermissions(token.scope, client.apiPermissions, user) : [] };
}

/**
 * The scope an API JWT of this token request would hold (the library's own rule for a resource):
 * the scopes the grant holds for the API among those asked (the request's `scope`, else the code's,
 * refresh token's or device code's).
 */
function apiScopeOf(ctx: KoaContextWithOIDC, asked: Set<string> | undefined, api: string): string {
  const grant = ctx.oidc.entities.Grant;
  const requested = typeof ctx.oidc.params?.scope === 'string' ? new Set(ctx.oidc.params.scope.split(' ')) : asked;
  return grant && requested ? grant.getResourceScopeFiltered(api, requested) : '';
}

export function tokenClaims(deps: TokenClaimsDeps): ExtraTokenClaims {
  const now = () => Math.floor(Date.now() / 1000);
  return async (ctx: KoaContextWithOIDC, token: Token): Promise<UnknownObject | undefined> => {
    if (token.kind === 'ClientCredentials') {
      const client = await deps.clients.find(token.clientId!);
      const roles = client ? [...client.roles] : [];
      return { nbf: now(), email: '', roles, permissions: roles.length ? await deps.rolePermissions(roles) : [] };
    }
    const accountId = 'accountId' in token ? token.accountId : undefined;
    if (typeof accountId !== 'string') return undefined;
    const p = await deps.principal(accountId);
    // How and when the user signed in (as REST tokens carry it): from the code or refresh token exchanged.
    const e = ctx.oidc.entities;
    const from = e.AuthorizationCode ?? e.RefreshToken ?? e.DeviceCode;
    // The API token's sid is identity's session id (the sessions API's), not the provider's per-client
    // sid; the token is recorded under that session as it is made (jti and expiry are set by now).
    const opUid = 'sessionUid' in token && typeof token.sessionUid === 'string' ? token.sessionUid : from && 'sessionUid' in from ? from.sessionUid : undefined;
    const sessions = deps.sessions;
    const sid = opUid && sessions ? ((await sessions.sessionId(opUid)) ?? undefined) : undefined;
    // A JWT is verified by the gateway on its own, an opaque one cached there for seconds: both are
    // recorded under their session (the opaque one by its value's SHA-256), so ending the session
    // denylists them.
    const jwt = 'resourceServer' in token && token.resourceServer?.accessTokenFormat === 'jwt';
    if (opUid && sessions && sid) {
      const exp = token.exp ?? now() + (token.expiration || deps.accessTokenSeconds);
      const jti = jwt ? token.jti : token.kind === 'AccessToken' && token.jti ? opaqueTokenJti(token.jti) : undefined;
      await sessions.tokenIssued(opUid, jti && token.clientId ? { jti, expiresAt: new Date(exp * 1000), clientId: token.clientId } : undefined);
    }
    if (!p) return undefined;
    const signIn = from ? { ...(from.amr ? { amr: from.amr } : {}), ...(from.acr ? { acr: from.acr } : {}), ...(from.authTime ? { auth_time: from.authTime } : {}), ...(sid ? { sid } : {}) } : {};
    const client = token.clientId ? await deps.clients.find(token.clientId) : null;
    // An opaque token's rights: the grant's API scopes among those asked, as an API JWT of this grant gets them.
    const rightsOf = jwt ? token : { scope: apiScopeOf(ctx, from?.scopes, deps.apiResource) };
    // An organization's token (the grant's, or a request naming one): `org`, no platform role, the member's permissions there.
    const org = jwt && deps.organizations ? await organizationClaimsOf({ grants: deps.organizations }, token, client?.firstParty ? null : (client?.apiPermissions ?? [])) : null;
    return { nbf: now(), email: p.email, ...(org ? { org: org.org, roles: [...org.roles], permissions: [...org.permissions] } : userRights(rightsOf, client, p)), ...signIn };
  };
}
