/**
 * Organization tokens at the provider (issue #41), Logto's pattern (a grant registered on
 * oidc-provider that exchanges a refresh token; Logto RFC 0001): the provider's driver of the one
 * use case `organizationRights` (app/organization-tokens.ts), whose REST driver is
 * `POST /api/v1/auth/organization-token`.
 *
 * - `grant_type=urn:iam:grant-type:organization_token`, `refresh_token`, `organization_id` (the
 *   organization's id or slug), optional `scope` (permissions). The refresh token is read, not
 *   rotated (its rotation and reuse detection stay the refresh grant's): only the live one of its
 *   client, of a live grant, of an account the provider still finds (the MFA policy included),
 *   granted `organization`, `organizations` or that organization's `organization:<slug>`. A client
 *   bound to DPoP, or a request with a proof, is refused (this grant cannot check the proof).
 * - The access token: an RFC 9068 JWT of the API with `org` {id, slug}, `aud` [JWT_AUDIENCE,
 *   `urn:iam:organization:<id>`], `roles: []`, and `permissions` = the member's organization
 *   permissions ∩ the scope asked (absent: all) ∩, for a third-party client, its API ceiling
 *   within what the refresh token was granted. Never more.
 * - A non-member and an unknown organization get the same `access_denied` (NOT_A_MEMBER).
 *
 * Tokens of an authorization request naming an organization (`organization:<slug>`, kept by the
 * grant as a scope of the API) get the same claims at the code exchange and at every refresh,
 * read again each time: a member removed meanwhile gets `invalid_grant`, so a removal counts at
 * the next refresh, and at the gateway once the tokens issued expire (JWT_EXPIRY at most).
 */
import type { Account, KoaContextWithOIDC, ResourceServer, TokenEndpointGrantContext } from 'oidc-provider';
import { AppError, organizationAudience } from '@iam/platform';
import { NOT_A_MEMBER, type OrganizationGrants, type OrganizationRights, organizationRights } from '../../app/organization-tokens';
import { ORGANIZATIONS_SCOPE, ORGANIZATION_SCOPE, type OrganizationRef, organizationAsked, organizationOfScope, organizationRefOf, organizationScopes } from '../../app/signin/organization-policy';

export const ORGANIZATION_TOKEN_GRANT = 'urn:iam:grant-type:organization_token';
export const ORGANIZATION_TOKEN_PARAMS = ['refresh_token', 'organization_id', 'scope'] as const;

/** What an organization access token carries in place of the user's platform rights. */
export interface OrganizationClaims {
  readonly org: { readonly id: string; readonly slug: string };
  readonly roles: readonly string[];
  readonly permissions: readonly string[];
}

/** The claims the grant decided for the access token it makes (token-claims.ts reads them, not the directory again). */
const decided = new WeakMap<object, OrganizationClaims>();

const claimsOf = (r: OrganizationRights): OrganizationClaims => ({ org: { id: r.organizationId, slug: r.organizationSlug }, roles: [], permissions: [...r.permissions].sort() });

/** A client's ceiling of API permissions for a user's token: null for the first party (the user's own rights). */
export type Ceiling = readonly string[] | null;

export interface OrganizationGrantDeps {
  readonly grants: Pick<OrganizationGrants, 'grant'>;
  /** The API's resource indicator and its resource server for a client (provider.ts). */
  readonly api: string;
  readonly apiServer: (ctx: KoaContextWithOIDC, client: { [key: string]: unknown } | undefined) => ResourceServer;
  /** The provider's own `findAccount` (a gone account, or one the MFA policy stops, is none). */
  readonly findAccount: (ctx: KoaContextWithOIDC, sub: string, token: never) => Promise<Account | undefined>;
  /** The client's API ceiling (null: first party). */
  readonly ceiling: (client: { [key: string]: unknown }) => Ceiling;
}

/** Rights with the refusal as the provider's error; `invalid` makes it (access_denied at the grant, invalid_grant at a refresh). */
async function rightsOr(deps: Pick<OrganizationGrantDeps, 'grants'>, userId: string, ref: OrganizationRef, scope: readonly string[] | undefined, invalid: (m: string) => Error): Promise<OrganizationRights> {
  try {
    return await organizationRights(deps.grants, userId, ref, scope);
  } catch (err) {
    if (err instanceof AppError && err.code === 'FORBIDDEN') throw invalid(NOT_A_MEMBER);
    throw err;
  }
}

/** The permissions a client may ask for a user: all (first party), else its ceiling within `granted`. */
function allowed(ceiling: Ceiling, granted: ReadonlySet<string>, asked: readonly string[] | undefined): readonly string[] | undefined {
  if (ceiling === null) return asked;
  const within = ceiling.filter((p) => granted.has(p));
  return asked ? within.filter((p) => asked.includes(p)) : within;
}

/** The grant's handler (`provider.registerGrantType`). */
export function organizationTokenGrant(deps: OrganizationGrantDeps): (ctx: TokenEndpointGrantContext) => Promise<void> {
  return async (ctx) => {
    const { errors } = await import('oidc-provider');
    const { client, params, provider } = ctx.oidc;
    const raw = typeof params.refresh_token === 'string' ? params.refresh_token : '';
    const orgParam = typeof params.organization_id === 'string' ? params.organization_id : '';
    if (!raw || !orgParam) throw new errors.InvalidRequest('missing required parameter(s) (refresh_token, organization_id)');
    const ref = organizationRefOf(orgParam);
    if (!ref) throw new errors.InvalidRequest('organization_id names no organization');

    // This grant cannot check a DPoP proof (the library keeps that to its own grants): a client
    // bound to DPoP, or one sending a proof, would get a bearer token it did not ask for; refused.
    if (client.dpopBoundAccessTokens || ctx.get('DPoP')) throw new errors.InvalidRequest('organization tokens are not issued DPoP-bound: use the REST exchange or a client without DPoP');
    const rt = await provider.RefreshToken.find(raw, { ignoreExpiration: true });
    if (!rt || rt.clientId !== client.clientId || rt.isExpired || rt.consumed) throw new errors.InvalidGrant('refresh token invalid, expired or used');
    // A sender-constrained refresh token is exchanged only where its proof is checked (the refresh grant).
    if (rt.jkt || rt['x5t#S256']) throw new errors.InvalidGrant('a sender-constrained refresh token is not exchanged for an organization token');
    const grant = await provider.Grant.find(rt.grantId!, { ignoreExpiration: true });
    if (!grant || grant.isExpired || grant.clientId !== client.clientId || grant.accountId !== rt.accountId) throw new errors.InvalidGrant('grant not found');
    ctx.oidc.entity('RefreshToken', rt);
    ctx.oidc.entity('Grant', grant);
    const account = await deps.findAccount(ctx, rt.accountId, rt as never);
    if (!account) throw new errors.InvalidGrant('refresh token invalid (referenced account not found)');
    ctx.oidc.entity('Account', account);

    // The user let this client act in organizations (or in the ones it named) when it signed in.
    const granted = rt.scopes;
    const named = organizationScopes([...granted].join(' '));
    if (!granted.has(ORGANIZATION_SCOPE) && !granted.has(ORGANIZATIONS_SCOPE) && named.length === 0) {
      throw new errors.InsufficientScope('refresh token missing required scope', ORGANIZATION_SCOPE);
    }
    const asked = typeof params.scope === 'string' && params.scope.trim() ? params.scope.trim().split(/\s+/) : undefined;
    const denied = (m: string) => new errors.AccessDenied(m);
    const r = await rightsOr(deps, rt.accountId, ref, allowed(deps.ceiling(client), granted, asked), denied);
    // Only the organizations it named, when it named some: any other is refused as a non-member's.
    if (!granted.has(ORGANIZATION_SCOPE) && !granted.has(ORGANIZATIONS_SCOPE) && !named.includes(`organization:${r.organizationSlug}`) && !named.includes(`organization:${r.organizationId}`)) throw denied(NOT_A_MEMBER);

    const at = new provider.AccessToken({
      accountId: rt.accountId,
      client,
      expiresWithSession: rt.expiresWithSession,
      grantId: rt.grantId!,
      gty: ORGANIZATION_TOKEN_GRANT,
      sessionUid: rt.sessionUid,
      sid: rt.sid,
    });
    at.resourceServer = new provider.ResourceServer(deps.api, deps.apiServer(ctx, client));
    const claims = claimsOf(r);
    at.scope = [`organization:${r.organizationSlug}`, ...claims.permissions].join(' ');
    decided.set(at, claims);
    ctx.oidc.entity('AccessToken', at);
    const value = await at.save();
    ctx.body = { access_token: value, expires_in: at.expiration, token_type: at.tokenType, scope: at.scope };
  };
}

/**
 * The organization claims of a user's access token (token-claims.ts): those the grant decided,
 * or for a token whose scope names `organization:<slug>` (an authorization request naming it),
 * what the member holds there now, narrowed as the grant narrows; null for any other token.
 * invalid_grant for a non-member (removed since): the code exchange or refresh fails.
 */
export async function organizationClaimsOf(
  deps: Pick<OrganizationGrantDeps, 'grants'>,
  token: { scope?: string | undefined; accountId?: unknown },
  ceiling: Ceiling,
): Promise<OrganizationClaims | null> {
  const known = decided.get(token);
  if (known) return known;
  const slugs = organizationScopes(token.scope);
  if (slugs.length === 0 || typeof token.accountId !== 'string') return null;
  const ref = organizationOfScope(slugs[0]!);
  if (!ref) return null;
  const { errors } = await import('oidc-provider');
  const scope = new Set((token.scope ?? '').split(' '));
  const r = await rightsOr(deps, token.accountId, ref, allowed(ceiling, scope, undefined), (m) => new errors.InvalidGrant(m));
  return claimsOf(r);
}

/** The organization audience beside the API's, for an access token carrying `org` (formats.customizers.jwt). */
export function organizationAudienceCustomizer(_ctx: unknown, _token: unknown, jwt: { payload: { [key: string]: unknown } }): void {
  const org = jwt.payload.org as { id?: unknown } | undefined;
  if (!org || typeof org.id !== 'string') return;
  const own = organizationAudience(org.id);
  const aud: unknown = jwt.payload.aud;
  const list: unknown[] = Array.isArray(aud) ? aud : aud === undefined ? [] : [aud];
  jwt.payload.aud = [...list.filter((a) => a !== own), own];
}

/**
 * `organization_id` on an authorization request (the provider's `extraParams`): a valid one is
 * added to the scope as `organization:<id or slug>`, so the grant, its code and refresh tokens
 * keep the organization as the scope form does; anything else is invalid_request.
 */
export async function organizationIdParam(ctx: KoaContextWithOIDC, value: string | undefined): Promise<void> {
  const { errors } = await import('oidc-provider');
  const params = ctx.oidc.params as { scope?: string; organization_id?: unknown };
  const scope = organizationIdScope(value);
  if (value !== undefined && value !== '' && !scope) throw new errors.InvalidRequest('organization_id names no organization');
  const scopes = (params.scope ?? '').split(' ').filter(Boolean);
  if (scope && !scopes.includes(scope)) params.scope = [...scopes, scope].join(' ');
  // The whole request's organization, checked here for every request (one at most), signed in or not.
  try {
    organizationAsked(params);
  } catch (err) {
    if (err instanceof AppError) throw new errors.InvalidRequest(err.message);
    throw err;
  }
}

/** `organization:<id or slug>` of an `organization_id` value; null when it names none. */
function organizationIdScope(value: unknown): string | null {
  const ref = typeof value === 'string' && value !== '' ? organizationRefOf(value) : null;
  return ref ? `organization:${'id' in ref ? ref.id : ref.slug}` : null;
}

/**
 * The `organization:<slug>` scopes a token request or authorization carries (the API's resource
 * server offers them): its scope and `organization_id` (read before the parameter's hook adds
 * it to the scope), the code's, refresh token's or device code's.
 */
export function organizationScopesOf(ctx: KoaContextWithOIDC): string[] {
  const e = ctx.oidc.entities;
  const from = [ctx.oidc.params?.scope, organizationIdScope(ctx.oidc.params?.organization_id) ?? '', e.AuthorizationCode?.scope, e.RefreshToken?.scope, e.DeviceCode?.scope];
  return [...new Set(from.flatMap((s) => organizationScopes(s)))];
}
