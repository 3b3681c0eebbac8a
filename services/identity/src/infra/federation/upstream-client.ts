/**
 * The relying party of an upstream provider (issue #40 item 2), on `openid-client` (certified RP):
 * discovery, the authorization URL with PKCE (S256), `state` and `nonce`, and the callback's
 * checks: state, `iss` of the authorization response (RFC 9207, required when the upstream
 * advertises it), the code exchange with the verifier, and the ID token's signature, `alg` (never
 * `none`), `iss`, `aud`, `exp` and `nonce`. GitHub is plain OAuth (infra/federation/github.ts).
 *
 * Every refusal is an UpstreamRefusal with a reason the sign-in audits; nothing the upstream said
 * is passed on to the user's page.
 */
import type * as OpenIdClientModule from 'openid-client';
import type { Configuration } from 'openid-client';
import type { IdentityProviderRecord } from '../../domain/identity-providers';
import { type UpstreamIdentity, UpstreamRefusal, type UpstreamRefusalReason, identityFromClaims } from './upstream-identity';

export { type UpstreamIdentity, UpstreamRefusal } from './upstream-identity';

export interface UpstreamStart {
  readonly url: URL;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

export interface UpstreamChecks {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

/** One upstream provider, as a relying party: start a sign-in, finish it from the callback URL. */
export interface UpstreamClient {
  /** `statePrefix` goes in front of the random state (what the callback routes by; never what makes it unguessable). */
  start(redirectUri: string, statePrefix?: string): Promise<UpstreamStart>;
  /** The identity the upstream vouched for; throws UpstreamRefusal. */
  finish(callbackUrl: URL, checks: UpstreamChecks, redirectUri: string): Promise<UpstreamIdentity>;
}

export type OpenIdClient = typeof OpenIdClientModule;

/** Where the presets live; tests point them at local stand-ins. */
export interface PresetEndpoints {
  readonly googleDiscoveryUrl: string;
  readonly github: { readonly authorizeUrl: string; readonly tokenUrl: string; readonly apiUrl: string; readonly issuer: string };
}

export const PUBLIC_PRESETS: PresetEndpoints = {
  googleDiscoveryUrl: 'https://accounts.google.com/.well-known/openid-configuration',
  github: { authorizeUrl: 'https://github.com/login/oauth/authorize', tokenUrl: 'https://github.com/login/oauth/access_token', apiUrl: 'https://api.github.com', issuer: 'https://github.com' },
};

/** Default scopes per kind when a provider names none. */
export const DEFAULT_SCOPES: Record<IdentityProviderRecord['kind'], readonly string[]> = {
  oidc: ['openid', 'email', 'profile'],
  google: ['openid', 'email', 'profile'],
  github: ['read:user', 'user:email'],
};

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** Plain http only to a loopback upstream (tests, a local development OP). */
export const isLoopback = (url: string): boolean => {
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
};

/** How long an upstream request may take before the sign-in answers "unavailable". */
const UPSTREAM_TIMEOUT_SECONDS = 10;

interface LibError {
  code?: string;
  message?: string;
  name?: string;
  cause?: unknown;
}

/** The error and its causes (openid-client wraps oauth4webapi's, whose own cause names the claim). */
function chainOf(err: unknown): LibError[] {
  const chain: LibError[] = [];
  for (let e: unknown = err; e instanceof Error && chain.length < 5; e = (e as LibError).cause) chain.push(e);
  return chain;
}

/** The refusal reason of an error openid-client (oauth4webapi) raised while finishing. */
export function refusalOf(err: unknown): UpstreamRefusalReason {
  if (err instanceof UpstreamRefusal) return err.reason;
  const chain = chainOf(err);
  const claim = chain.map((e) => (typeof e.cause === 'object' && e.cause !== null ? (e.cause as { claim?: unknown }).claim : undefined)).find((c) => typeof c === 'string');
  const messages = chain.map((e) => e.message ?? '').join(' | ');
  const codes = new Set(chain.map((e) => e.code));
  if (codes.has('OAUTH_JWT_TIMESTAMP_CHECK_FAILED')) return 'expired';
  if (codes.has('OAUTH_JWT_CLAIM_COMPARISON_FAILED')) {
    if (claim === 'aud' || claim === 'azp') return 'audience';
    if (claim === 'iss') return 'issuer';
    if (claim === 'nonce') return 'nonce';
    return 'token';
  }
  if (/"alg" header/.test(messages)) return 'algorithm';
  if (/"state" response parameter/.test(messages)) return 'state';
  if (/"iss" \(issuer\) response parameter/.test(messages)) return 'issuer';
  if (codes.has('OAUTH_AUTHORIZATION_RESPONSE_ERROR')) return 'denied';
  if (codes.has('OAUTH_RESPONSE_BODY_ERROR')) return 'code';
  if (chain.some((e) => e.name === 'TimeoutError' || e.name === 'AbortError') || /fetch failed|ECONNREFUSED/.test(messages) || codes.has('OAUTH_RESPONSE_IS_NOT_CONFORM')) return 'unavailable';
  return 'token';
}

/** An OpenID Connect upstream (kinds oidc and google). */
export function oidcUpstream(oc: OpenIdClient, config: Configuration, provider: IdentityProviderRecord): UpstreamClient {
  const scopes = provider.scopes.length > 0 ? provider.scopes : DEFAULT_SCOPES[provider.kind];
  return {
    async start(redirectUri, statePrefix = '') {
      const codeVerifier = oc.randomPKCECodeVerifier();
      const state = `${statePrefix}${oc.randomState()}`;
      const nonce = oc.randomNonce();
      const url = oc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: scopes.includes('openid') ? scopes.join(' ') : ['openid', ...scopes].join(' '),
        code_challenge: await oc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url, state, nonce, codeVerifier };
    },

    async finish(callbackUrl, checks, redirectUri) {
      let tokens: Awaited<ReturnType<OpenIdClient['authorizationCodeGrant']>>;
      try {
        tokens = await oc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        }, { redirect_uri: redirectUri });
      } catch (err) {
        throw new UpstreamRefusal(refusalOf(err), err);
      }
      const claims = tokens.claims();
      if (!claims) throw new UpstreamRefusal('token');
      return identityFromClaims(claims, provider.claimMapping, config.serverMetadata().issuer);
    },
  };
}

/** Discovers an OpenID Connect upstream (its discovery URL, or Google's); the configuration its sign-ins use. */
export async function discoverOidc(oc: OpenIdClient, provider: IdentityProviderRecord, clientSecret: string | null, presets: PresetEndpoints): Promise<Configuration> {
  const discoveryUrl = provider.kind === 'google' ? presets.googleDiscoveryUrl : provider.discoveryUrl;
  if (!discoveryUrl) throw new UpstreamRefusal('unavailable');
  const metadata = clientSecret === null ? undefined : clientSecret;
  const auth = clientSecret === null ? oc.None() : oc.ClientSecretBasic(clientSecret);
  try {
    const config = await oc.discovery(new URL(discoveryUrl), provider.clientId, metadata, auth, {
      ...(isLoopback(discoveryUrl) ? { execute: [oc.allowInsecureRequests] } : {}),
      timeout: UPSTREAM_TIMEOUT_SECONDS,
    });
    config.timeout = UPSTREAM_TIMEOUT_SECONDS;
    return config;
  } catch (err) {
    throw new UpstreamRefusal('unavailable', err);
  }
}
