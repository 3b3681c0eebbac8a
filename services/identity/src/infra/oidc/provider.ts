/**
 * The OpenID provider: oidc-provider (panva, certified) configured to DESIGN §5. Code + PKCE
 * (S256 only), refresh rotation (a consumed refresh token revokes its grant), client credentials,
 * device flow, PAR, DPoP, revocation and introspection of every token it issues (JWT access tokens
 * through provider-token-endpoints.ts; confidential clients, resource servers), userinfo,
 * RP-initiated logout, `iss` in authorization responses. Access tokens for the API are RFC 9068
 * JWTs for the resource JWT_AUDIENCE, with roles and permissions as REST tokens carry them: the
 * user's for the first party, only the consented API scopes for a third party (token-claims.ts). Records
 * live in identity's PostgreSQL (pg-adapter.ts); clients come from the registry (ClientLookup);
 * the signing keys are the key ring's, so the provider is rebuilt whenever the ring's set changes.
 */
import type { JWK } from 'jose';
import type Koa from 'koa';
import type { Account, Configuration, KoaContextWithOIDC, ResourceServer } from 'oidc-provider';
import type ProviderType from 'oidc-provider';
import type { DataSource } from 'typeorm';
import { type Logger, UNAVAILABLE_RETRY_AFTER_SECONDS, isPlainText } from '@iam/platform';
import { type ClientLookup, OIDC_SCOPES } from '../../domain/clients';
import type { Principal } from '../../domain/model';
import type { OrganizationGrants } from '../../app/organization-tokens';
import { ORGANIZATIONS_SCOPE, ORGANIZATION_SCOPE } from '../../app/signin/organization-policy';
import { ACR_MFA, ACR_PWD, nextStep } from '../../app/signin/policy';
import { organizationPolicy } from './organization-policy-check';
import { clientMetadata } from './client-metadata';
import { devicePageErrors } from './device-pages';
import { ORGANIZATION_TOKEN_GRANT, ORGANIZATION_TOKEN_PARAMS, organizationAudienceCustomizer, organizationIdParam, organizationScopesOf, organizationTokenGrant } from './organization-grant';
import { GrantReadAhead, PgOidcAdapter } from './pg-adapter';
import type { RefreshRetry } from './refresh-retry';
import { requestSizeParams } from './request-limits';
import { sessionEvents } from './session-events';
import { type ProviderTokenChecks, providerTokenEndpoints } from './provider-token-endpoints';
import { tokenClaims } from './token-claims';
import { ConsumedMeanwhile, type TokenRequestWrites } from './token-writes';
import { answerUnavailableWith503, isUnavailable } from './unavailable';

export type Provider = ProviderType;

export interface OpSettings {
  /** PUBLIC_URL: the issuer. */
  readonly issuer: string;
  /** Path prefix of the provider's endpoints behind the gateway (`/oidc`). */
  readonly prefix: string;
  /** Keys that sign the provider's cookies (the first signs, all verify). */
  readonly cookieKeys: readonly string[];
  /** JWT_AUDIENCE: the `aud` of the API's access tokens. */
  readonly audience: string;
  /** JWT_ALG: the API's access tokens are signed in it (the gateway accepts no other). */
  readonly alg: string;
  /** The key ring's algorithms (RS256 first): offered for ID tokens and signed userinfo, per client. */
  readonly signingAlgs: readonly string[];
  readonly accessTokenSeconds: number;
  readonly refreshTokenSeconds: number;
  readonly sessionSeconds: number;
}

/** What the provider asks of the rest of identity. */
export interface OpDeps {
  readonly dataSource: DataSource;
  /** The token endpoint's writes, collected per request and written in one statement. */
  readonly writes: TokenRequestWrites;
  /** A refresh retried within its window gets the answer its rotation gave (absent: every reuse revokes). */
  readonly refreshRetry?: RefreshRetry;
  readonly clients: ClientLookup;
  /** The user behind a subject now (roles and permissions as REST tokens carry them); null when gone. */
  readonly principal: (userId: string) => Promise<Principal | null>;
  /** Membership in organizations (issue #41; absent: a request naming an organization is refused, and no organization token is made). */
  readonly organizations?: OrganizationGrants;
  /** MFA_REQUIRED_ROLES (absent or empty: no principal is read per authorization for it). */
  readonly requiredRoles?: readonly string[];
  /** The permissions of a service account's roles (asked of the directory). */
  readonly rolePermissions: (roles: readonly string[]) => Promise<string[]>;
  /** Each token endpoint answer, by client and grant type (counted for the audit, never written one by one). */
  readonly tokensIssued?: (clientId: string, grantType: string) => void;
  readonly sessions?: OpSessionHooks;
  /** A consumed refresh token presented again: the library revoked its grant (for the audit). */
  readonly refreshReused?: (accountId: string, clientId: string, grantId: string) => void;
  /** Introspection and revocation of the JWT access tokens the library refuses (absent: the library's answers only). */
  readonly tokenChecks?: ProviderTokenChecks;
  readonly logger: Logger;
}

/**
 * The provider's sessions in identity's sessions list (DESIGN §5 "Sessions"): a sign-in records
 * one (device, IP, how and when), each authorization and token marks it used, and the access
 * tokens it issues are recorded under it (ending it denylists them) and carry its id as `sid`.
 */
export interface OpSessionHooks {
  signedIn(s: { opSessionUid: string; userId: string; amr: readonly string[]; authTime: Date; userAgent: string; ip: string; expiresAt: Date }): Promise<void>;
  /** Marks the session of a provider session used; its id, or null when none is live. */
  touch(opSessionUid: string): Promise<string | null>;
  /** Identity's session id of a provider session; null when none is live. */
  sessionId(opSessionUid: string): Promise<string | null>;
  /** Marks the session used, and records an access token it issues when given (with the token request's writes). */
  tokenIssued(opSessionUid: string, record?: { jti: string; expiresAt: Date; clientId: string }): Promise<void>;
  /**
   * The user signed out at the provider (RP-initiated logout): the session ends and the access
   * tokens it issued are refused; with `clientId`, the user signed only that client out and
   * stayed signed in: the tokens the session issued to it are refused.
   */
  signedOut(opSessionUid: string, userId: string, clientId?: string): Promise<void>;
}

/** The pages the provider renders itself (api/op/library-pages.ts supplies them). */
export interface OpPages {
  readonly logoutSource: (ctx: KoaContextWithOIDC, form: string) => void;
  readonly postLogoutSuccessSource: (ctx: KoaContextWithOIDC) => void;
  readonly userCodeInputSource: (ctx: KoaContextWithOIDC, form: string, out?: unknown, err?: unknown) => void;
  readonly userCodeConfirmSource: (ctx: KoaContextWithOIDC, form: string, client: unknown, deviceInfo: unknown, userCode: string) => void;
  readonly successSource: (ctx: KoaContextWithOIDC) => void;
  readonly renderError: (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string | undefined }, error: Error) => void;
}

export const OP_SCOPES = OIDC_SCOPES;
/** How long a sign-in (an authorization request's interaction) may take: 15 minutes (Keycloak's login timeout is 30). */
export const INTERACTION_SECONDS = 900;
export const FIRST_PARTY = 'urn:iam:first_party';
export const ROLES = 'urn:iam:roles';
/** A client's ceiling of API permissions (client metadata): the API resource's scopes for it. */
export const API_PERMISSIONS = 'urn:iam:api_permissions';
/** A client registered as a resource server (client metadata): it introspects every client's access tokens. */
export const RESOURCE_SERVER = 'urn:iam:resource_server';
/** How long an ID token is valid (s): the key ring keeps a retired key published at least this long. */
export const ID_TOKEN_SECONDS = 3_600;

/** What a session, code, device code or refresh token says was verified, for the policy: its amr, `mfa` when its acr says so. */
function verifiedAmr(x: { amr?: unknown; acr?: unknown }): string[] {
  const amr = Array.isArray(x.amr) ? x.amr.filter((v): v is string => typeof v === 'string') : [];
  return x.acr === ACR_MFA && !amr.includes('mfa') ? [...amr, 'mfa'] : amr;
}

/** The provider's routes under the prefix; the JWKS is the gateway's `/.well-known/jwks.json` (the same keys). */
function routes(prefix: string): NonNullable<Configuration['routes']> {
  return {
    authorization: `${prefix}/auth`,
    token: `${prefix}/token`,
    userinfo: `${prefix}/me`,
    end_session: `${prefix}/session/end`,
    revocation: `${prefix}/token/revocation`,
    introspection: `${prefix}/token/introspection`,
    device_authorization: `${prefix}/device/auth`,
    code_verification: `${prefix}/device`,
    pushed_authorization_request: `${prefix}/par`,
    jwks: '/.well-known/jwks.json',
  };
}

/** The API as an RFC 8707 resource indicator (an absolute URI): `{PUBLIC_URL}/api`; its tokens' `aud` is JWT_AUDIENCE. */
export function apiResource(issuer: string): string {
  return `${issuer}/api`;
}

export async function createProvider(s: OpSettings, deps: OpDeps, pages: OpPages, jwks: { keys: JWK[] }): Promise<Provider> {
  const { default: Provider, interactionPolicy } = await import('oidc-provider');
  // The one MFA policy (app/signin/policy.ts) for a session already open. Step-up: acr_values
  // asking for mfa signs in again (with the factor) unless this session's sign-in had one; max_age
  // is the provider's own check (a fresh sign-in when too old).
  const requiredRoles = deps.requiredRoles ?? [];
  const policy = interactionPolicy.base();
  const sessionAmr = (session: { acr?: unknown } | undefined) => (session?.acr === ACR_MFA ? ['mfa'] : []);
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('acr_mfa', 'A second factor is requested', 'login_required', (ctx) =>
      !ctx.oidc.result?.login && nextStep({ roles: [], requiredRoles, acrValues: ctx.oidc.params?.acr_values, amr: sessionAmr(ctx.oidc.session) }) !== 'done'
        ? interactionPolicy.Check.REQUEST_PROMPT
        : interactionPolicy.Check.NO_NEED_TO_PROMPT,
    ),
  );
  // MFA_REQUIRED_ROLES for a session already open: a member of such a role whose session's sign-in
  // had no second factor (the role came later) signs in again, with the factor.
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('mfa_policy', 'This account needs a second factor', 'login_required', async (ctx) => {
      const session = ctx.oidc.session;
      if (requiredRoles.length === 0 || !session?.accountId || session.acr === ACR_MFA || ctx.oidc.result?.login) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      const p = await deps.principal(session.accountId);
      return p && nextStep({ roles: p.roles, requiredRoles, amr: sessionAmr(session) }) !== 'done' ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT;
    }),
  );
  // A request naming an organization, for a session already open: a non-member gets no code (organization-policy-check.ts).
  const organizations = deps.organizations ?? { grant: async () => null, organizationsOf: async () => [] };
  policy.get('login')!.checks.add(await organizationPolicy(organizations));
  const api = apiResource(s.issuer);
  const signingAlgs = s.signingAlgs as Array<'RS256' | 'ES256' | 'EdDSA'>;
  // The API's scopes for a client: the OpenID ones, and for a third-party client the API
  // permissions of its ceiling (each asked as a scope of its name, so a scope outside the ceiling
  // is never granted); the first party acts with the user's rights (token-claims.ts).
  // An organization named by the request (or by the code or refresh token exchanged) is one more of its scopes.
  const ceilingOf = (client: { [key: string]: unknown }) => (client[FIRST_PARTY] === true ? null : Array.isArray(client[API_PERMISSIONS]) ? (client[API_PERMISSIONS] as unknown[]).filter((p) => typeof p === 'string') : []);
  const apiServer = (ctx: KoaContextWithOIDC, client: { [key: string]: unknown } | undefined): ResourceServer => {
    const ceiling = client ? (ceilingOf(client) ?? []) : [];
    return {
      scope: [...new Set([...OP_SCOPES, ...ceiling, ...organizationScopesOf(ctx)])].join(' '),
      audience: s.audience,
      accessTokenFormat: 'jwt',
      accessTokenTTL: s.accessTokenSeconds,
      jwt: { sign: { alg: s.alg as 'EdDSA' } },
    };
  };
  const clientAdapter = {
    async find(id: string) {
      // A client_id with a control character names no client (and must not reach PostgreSQL).
      if (!isPlainText(id)) return undefined;
      const c = await deps.clients.find(id);
      return c ? clientMetadata(c) : undefined;
    },
    upsert: async () => {},
    findByUid: async () => undefined,
    findByUserCode: async () => undefined,
    consume: async () => {},
    destroy: async () => {},
    revokeByGrantId: async () => {},
  };
  const shared = { readAhead: new GrantReadAhead(), writes: deps.writes, refreshRetrySeconds: deps.refreshRetry?.windowSeconds ?? 0 };
  const configuration: Configuration = {
    adapter: (name: string) => (name === 'Client' ? clientAdapter : new PgOidcAdapter(deps.dataSource, name, shared)),
    jwks,
    cookies: { keys: [...s.cookieKeys] },
    routes: routes(s.prefix),
    scopes: [...OP_SCOPES, ORGANIZATION_SCOPE, ORGANIZATIONS_SCOPE],
    // auth_time, amr and acr come from the sign-in (the session), the rest from the account;
    // `organizations` (the ids of the user's organizations) only when asked (its scope or claim).
    claims: { openid: ['sub', 'auth_time', 'amr', 'acr'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'], organizations: ['organizations'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    extraClientMetadata: { properties: [FIRST_PARTY, ROLES, API_PERMISSIONS, RESOURCE_SERVER] },
    // Caps on what an authorization, pushed or device request stores (request-limits.ts).
    extraParams: { ...requestSizeParams, organization_id: organizationIdParam },
    // ID tokens and signed userinfo in any algorithm of the ring (RS256 first: discovery lists it,
    // and clients get it unless they ask for another); the API's access tokens in JWT_ALG only.
    enabledJWA: {
      idTokenSigningAlgValues: [...signingAlgs],
      userinfoSigningAlgValues: [...signingAlgs],
      authorizationSigningAlgValues: [...signingAlgs],
      introspectionSigningAlgValues: [...signingAlgs],
      dPoPSigningAlgValues: ['ES256', 'EdDSA', 'RS256', 'PS256'],
    },
    acrValues: [ACR_PWD, ACR_MFA],
    // The ID token carries the claims its scopes allow (DESIGN §5), not only userinfo.
    conformIdTokenClaims: false,
    rotateRefreshToken: true,
    // A first-party client (the console, the account page) gets a refresh token without
    // offline_access: like every token of such a grant it expires with the OP session
    // (expiresWithSession), so it keeps a page signed in while the session lives and dies with
    // sign-out. Others get one only with offline_access (which asks for consent).
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && (code.scopes.has('offline_access') || client[FIRST_PARTY] === true),
    ttl: {
      AccessToken: s.accessTokenSeconds,
      ClientCredentials: s.accessTokenSeconds,
      AuthorizationCode: 60,
      DeviceCode: 600,
      IdToken: ID_TOKEN_SECONDS,
      // A sign-in's page left open longer starts again (its record goes; the page says so).
      Interaction: INTERACTION_SECONDS,
      Session: s.sessionSeconds,
      Grant: s.refreshTokenSeconds,
      RefreshToken: s.refreshTokenSeconds,
      PushedAuthorizationRequest: 60,
    },
    interactions: { policy, url: (_ctx, interaction) => `${s.prefix}/interaction/${interaction.uid}` },
    renderError: pages.renderError,
    findAccount: async (_ctx, sub, token): Promise<Account | undefined> => {
      const p = await deps.principal(sub);
      if (!p) return undefined;
      // A code, device code or refresh token of a sign-in without a second factor, for a member of
      // a role in MFA_REQUIRED_ROLES (given after that sign-in): invalid_grant, as for an unknown account.
      if (token && (token.kind === 'AuthorizationCode' || token.kind === 'RefreshToken' || token.kind === 'DeviceCode') && nextStep({ roles: p.roles, requiredRoles, amr: verifiedAmr(token) }) !== 'done') return undefined;
      return {
        accountId: p.userId,
        claims: async (_use, scope, claims) => ({
          sub: p.userId,
          email: p.email,
          email_verified: p.emailVerified,
          given_name: p.firstName,
          family_name: p.lastName,
          ...(scope.split(' ').includes(ORGANIZATIONS_SCOPE) || claims?.organizations !== undefined ? { organizations: (await organizations.organizationsOf(p.userId)).map((g) => g.organizationId) } : {}),
        }),
      };
    },
    extraTokenClaims: tokenClaims({ ...deps, accessTokenSeconds: s.accessTokenSeconds, apiResource: api }),
    // An organization's access token names it among its audiences too (the gateway requires both).
    formats: { customizers: { jwt: organizationAudienceCustomizer } },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // Confidential clients, about their own tokens; a client registered as a resource server
      // (Administrator only) about any client's access tokens, never its refresh tokens. JWT
      // access tokens: provider-token-endpoints.ts, by the same rule.
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) =>
          client.clientAuthMethod !== 'none' && (token.clientId === client.clientId || (client[RESOURCE_SERVER] === true && token.kind !== 'RefreshToken')),
      },
      // A client revokes its own tokens only (the library's default rule, stated).
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: true },
      // Userinfo as a signed JWT for a client that asks (userinfo_signed_response_alg); plain JSON otherwise.
      jwtUserinfo: { enabled: true },
      dPoP: { enabled: true },
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
      deviceFlow: {
        enabled: true,
        userCodeInputSource: pages.userCodeInputSource,
        userCodeConfirmSource: pages.userCodeConfirmSource,
        successSource: pages.successSource,
      },
      rpInitiatedLogout: { enabled: true, logoutSource: pages.logoutSource, postLogoutSuccessSource: pages.postLogoutSuccessSource },
      resourceIndicators: {
        enabled: true,
        // The API is the one resource: granted by every authorization; a token request for an
        // openid grant names it (`resource`) to get an API token, else gets a userinfo token.
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? api,
        getResourceServerInfo: async (_ctx, resource, client) => {
          if (resource !== api) {
            const { errors } = await import('oidc-provider');
            throw new errors.InvalidTarget();
          }
          return apiServer(_ctx, client);
        },
      },
    },
  };
  const provider = new Provider(s.issuer, configuration);
  // Organization tokens exchanged from a refresh token (organization-grant.ts, Logto's pattern).
  const findAccount = configuration.findAccount!;
  provider.registerGrantType(
    ORGANIZATION_TOKEN_GRANT,
    organizationTokenGrant({ grants: organizations, api, apiServer, findAccount: async (ctx, sub, token) => findAccount(ctx, sub, token), ceiling: ceilingOf }),
    [...ORGANIZATION_TOKEN_PARAMS],
  );
  // Behind the gateway: the client's address and scheme come from X-Forwarded-*.
  provider.proxy = true;
  // The registry keeps only a hash of a secret: comparisons go to it (constant time there).
  provider.Client.prototype.compareClientSecret = function (this: { clientId: string }, actual: string) {
    return deps.clients.verifySecret(this.clientId, actual);
  };
  // A dependency down or late (the database, the directory): 503 with Retry-After, not server_error 500 (the outermost middleware).
  answerUnavailableWith503(provider, deps.logger);
  // JWT access tokens at introspection and revocation (the library refuses structured tokens).
  if (deps.tokenChecks) provider.use(providerTokenEndpoints(provider, { prefix: s.prefix, checks: deps.tokenChecks, resourceServer: RESOURCE_SERVER }));
  // A failure no route handled: logged (not printed to stderr by Koa); the device pages' refusals are 400 pages.
  const app: Koa = provider;
  app.on('error', (err: unknown) => deps.logger.error({ err }, 'OpenID provider request failed'));
  provider.use(devicePageErrors(s.prefix, pages, deps.logger));
  // Identity's session of a sign-in is written before its code leaves; a logout's end before its redirect.
  const sessionWrites = sessionEvents(provider, deps.sessions, s, deps.logger);
  const unavailable = (ctx: KoaContextWithOIDC) => (err: unknown): void => {
    ctx.remove('Location');
    ctx.status = 503;
    ctx.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    pages.renderError(ctx, { error: 'temporarily_unavailable', error_description: 'The sign-in could not be completed. Try again in a moment.' }, err instanceof Error ? err : new Error(String(err)));
  };
  // The token endpoint's writes go out together, after the library has answered and before the
  // answer leaves, and only when it answered with tokens (an error writes nothing it collected);
  // when they cannot be written the answer is an error, and nothing was written.
  const tokenPath = `${s.prefix}/token`;
  provider.use(async (ctx, next: () => Promise<void>) => {
    if (ctx.method !== 'POST' || ctx.path !== tokenPath) {
      await next();
      // A sign-in's session, a logout's end, whatever spelling of the path the library's router took.
      if ('oidc' in ctx) await sessionWrites.settle(ctx, unavailable(ctx as KoaContextWithOIDC));
      return;
    }
    try {
      await deps.writes.collect(async () => {
        await next();
        // A refresh's answer is kept with its rotation, or a retry's replaced by the one kept.
        deps.refreshRetry?.settle(ctx);
        // An error answer writes nothing it collected (a refresh refused as invalid_target leaves its token unspent).
        if (ctx.status >= 400) deps.writes.discard();
      });
    } catch (err) {
      // The database down or late: the outer middleware answers 503 (unavailable.ts); nothing was written.
      if (isUnavailable(err)) throw err;
      const meanwhile = err instanceof ConsumedMeanwhile;
      if (!meanwhile) deps.logger.error({ err }, 'OpenID provider token request could not be written');
      ctx.status = meanwhile ? 400 : 500;
      ctx.body = meanwhile ? { error: 'invalid_grant', error_description: 'grant request is invalid' } : { error: 'server_error', error_description: 'oops! something went wrong' };
    }
  });
  provider.on('grant.success', (ctx) => {
    // A retry answered with its rotation's answer issued nothing new.
    if (deps.writes.retry()) return;
    const clientId = ctx.oidc.client?.clientId;
    const grantType = ctx.oidc.params?.grant_type;
    if (clientId && typeof grantType === 'string') deps.tokensIssued?.(clientId, grantType);
  });
  // The library's reuse detection: a consumed refresh token at the token endpoint revokes its grant
  // (revoke.js emits grant.revoked; the revocation endpoint and code reuse are told apart by grant_type).
  provider.on('grant.revoked', (ctx, grantId: string) => {
    if (ctx.oidc.params?.grant_type !== 'refresh_token') return;
    const rt = ctx.oidc.entities.RefreshToken;
    if (rt?.accountId && rt.clientId) deps.refreshReused?.(rt.accountId, rt.clientId, grantId);
  });
  return provider;
}
