/**
 * Signing in through the platform's OpenID provider as the built-in public client `iam-console`
 * (DESIGN §5): authorization code + PKCE S256, through panva's oauth4webapi (the low-level
 * client that openid-client is built on: discovery, PKCE, `state`/`nonce`/`iss` (RFC 9207) checks,
 * the ID token's claims). The console and the hosted account page share it; each is its own
 * redirect URI (`/console/`, `/account`).
 *
 * Tokens live in memory only (auth/session.ts). What must survive the top-level redirect to the
 * OP and back is the sign-in in progress (PKCE verifier, state, nonce, where to return): it is kept
 * in sessionStorage under one key and removed as soon as the answer comes back. It is not a token:
 * the verifier is single use and worthless without the code, which goes only to this redirect URI.
 *
 * A page opened with no session (a reload, a deep link in a new tab) asks the OP silently
 * (`prompt=none`, a top-level redirect): an OP session answers with a code and the page returns to
 * the deep link; without one the OP answers `login_required` and the page offers "Sign in". The
 * refresh token the OP gives this first-party client without `offline_access` lives only as long
 * as the OP session (provider.ts). Sign-out revokes it and ends the OP session (RP-initiated logout).
 */
import * as oauth from 'oauth4webapi';
import { decodeClaims, endSession, onSession, session, setRefresher, startSession } from './session';

export const CLIENT_ID = 'iam-console';
const client: oauth.Client = { client_id: CLIENT_ID, token_endpoint_auth_method: 'none' };
const auth = oauth.None();
const SCOPE = 'openid profile email';
const PENDING = 'iam.oidc.pending';

const origin = window.location.origin;
/** The OP is this origin (PUBLIC_URL); over http only on the loopback, which the OP allows for http. */
const insecure = { [oauth.allowInsecureRequests]: window.location.protocol === 'http:' };
/** RFC 8707: the API's access tokens (aud = JWT_AUDIENCE) are asked for by naming it. */
const resource = `${origin}/api`;

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  returnTo: string;
  silent: boolean;
}

/** The page is open at an address other than PUBLIC_URL (the issuer): the OP sends browsers back only there. */
export class WrongOrigin extends Error {
  constructor(readonly issuer: string) {
    super(`This page signs in only at ${issuer}`);
  }
}

/** Why the start-up could not sign in, in words. */
export function startFailure(err: unknown, page: string): string {
  if (err instanceof WrongOrigin) return `Open this page at ${err.issuer}${page}: the sign-in service sends browsers back only to that address.`;
  return 'The sign-in service could not be reached. Try again in a moment.';
}

let server: Promise<oauth.AuthorizationServer> | undefined;
function authorizationServer(): Promise<oauth.AuthorizationServer> {
  server ??= (async () => {
    const issuer = new URL(origin);
    const res = await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' });
    const copy = res.clone();
    try {
      return await oauth.processDiscoveryResponse(issuer, res);
    } catch (err) {
      const named: unknown = await copy.json().catch(() => undefined);
      const other = typeof named === 'object' && named !== null && 'issuer' in named ? named.issuer : undefined;
      if (typeof other === 'string' && other !== origin) throw new WrongOrigin(other);
      throw err;
    }
  })().catch((err: unknown) => {
    server = undefined;
    throw err;
  });
  return server;
}

let idToken: string | undefined;

/** Claims of the ID token that name the person (the API's access token carries roles and permissions). */
function userOf(claims: oauth.IDToken | undefined, roles: string[]) {
  if (!claims) return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return { id: claims.sub, firstName: str(claims.given_name), lastName: str(claims.family_name), email: str(claims.email), roles };
}

function begin(tokens: oauth.TokenEndpointResponse, claims: oauth.IDToken | undefined): void {
  if (!tokens.refresh_token) throw new Error('The provider gave no refresh token.');
  if (tokens.id_token) idToken = tokens.id_token;
  startSession({ token: tokens.access_token, refreshToken: tokens.refresh_token, expiresIn: tokens.expires_in ?? 60, user: userOf(claims, decodeClaims(tokens.access_token).roles) });
}

/** Refreshes go to the OP's token endpoint (set by startUp: the page's one way of signing in). */
function refreshThroughOp(): void {
  setRefresher(async (refreshToken) => {
    const as = await authorizationServer();
    const res = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, { ...insecure, additionalParameters: { resource } });
    const tokens = await oauth.processRefreshTokenResponse(as, client, res);
    if (tokens.id_token) idToken = tokens.id_token;
    if (!tokens.refresh_token) throw new Error('The provider gave no refresh token.');
    return { token: tokens.access_token, refreshToken: tokens.refresh_token, expiresIn: tokens.expires_in ?? 60 };
  });
}
onSession((s) => {
  if (!s) idToken = undefined;
});

/**
 * Goes to the OP's authorization endpoint (leaves the page). `silent`: `prompt=none`, the OP
 * answers at once (a code, or `login_required`); else the OP's sign-in page, asked even over a
 * session of the OP when `fresh` (`prompt=login`: a re-authentication).
 */
export async function redirectToSignIn(redirectUri: string, returnTo: string, silent: boolean, fresh = false): Promise<never> {
  const as = await authorizationServer();
  const p: Pending = { state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), verifier: oauth.generateRandomCodeVerifier(), redirectUri, returnTo, silent };
  sessionStorage.setItem(PENDING, JSON.stringify(p));
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: SCOPE,
    resource,
    state: p.state,
    nonce: p.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(p.verifier),
    code_challenge_method: 'S256',
    ...(silent ? { prompt: 'none' } : fresh ? { prompt: 'login' } : {}),
  }).toString();
  window.location.assign(url.href);
  return new Promise<never>(() => {});
}

function takePending(): Pending | undefined {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Pending;
  } catch {
    return undefined;
  }
}

export type Start =
  /** Signed in (the address is back at the deep link). */
  | { kind: 'signed-in' }
  /** No OP session (or the person stopped at the OP): offer "Sign in"; `message` says why when it is not the silent check. */
  | { kind: 'signed-out'; message?: string }
  /** Leaving for the OP (silent check). */
  | { kind: 'redirecting' };

/** The OAuth errors of a silent check that mean "sign in interactively". */
const INTERACTIVE = new Set(['login_required', 'interaction_required', 'consent_required', 'account_selection_required']);

/**
 * What a page does at load. On the redirect back from the OP (a `state` and a sign-in in
 * progress): checks the answer, exchanges the code, and puts the address back to the deep link
 * (the code and state leave the address bar and the history). Otherwise, with no session, the
 * silent check (unless `silent` is false).
 */
export async function startUp(redirectUri: string, opts: { silent?: boolean } = {}): Promise<Start> {
  refreshThroughOp();
  const here = new URL(window.location.href);
  const isAnswer = here.searchParams.has('state') && (here.searchParams.has('code') || here.searchParams.has('error'));
  if (isAnswer) {
    const pending = takePending();
    const back = pending?.returnTo ?? here.pathname;
    window.history.replaceState(null, '', back);
    if (!pending) return { kind: 'signed-out', message: 'The sign-in could not be completed (it was started in another tab or too long ago). Please sign in again.' };
    try {
      const as = await authorizationServer();
      const params = oauth.validateAuthResponse(as, client, here.searchParams, pending.state);
      const res = await oauth.authorizationCodeGrantRequest(as, client, auth, params, pending.redirectUri, pending.verifier, { ...insecure, additionalParameters: { resource } });
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, res, { expectedNonce: pending.nonce, requireIdToken: true });
      begin(tokens, oauth.getValidatedIdTokenClaims(tokens));
      window.dispatchEvent(new PopStateEvent('popstate'));
      return { kind: 'signed-in' };
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        if (pending.silent && INTERACTIVE.has(err.error)) return { kind: 'signed-out' };
        if (err.error === 'access_denied') return { kind: 'signed-out', message: 'Sign-in was cancelled.' };
      }
      return { kind: 'signed-out', message: 'The sign-in could not be completed. Please sign in again.' };
    }
  }
  if (session()) return { kind: 'signed-in' };
  if (opts.silent === false) return { kind: 'signed-out' };
  await redirectToSignIn(redirectUri, here.pathname + here.search, true);
  return { kind: 'redirecting' };
}

/**
 * Signs out: revokes the refresh token (its grant's tokens with it), forgets the session, and
 * ends the OP session (RP-initiated logout; the OP asks to confirm and comes back to `returnUri`).
 */
export async function signOut(returnUri: string): Promise<never> {
  const s = session();
  const hint = idToken;
  const as = await authorizationServer().catch(() => undefined);
  if (!as?.end_session_endpoint) {
    endSession('You have signed out here; the provider could not be reached to end its session.');
    return new Promise<never>(() => {});
  }
  // Already revoked (sign out everywhere) or unreachable: the provider's sign-out still ends the session.
  if (s) await oauth.revocationRequest(as, client, auth, s.refreshToken, insecure).then(oauth.processRevocationResponse).catch(() => undefined);
  endSession('You have signed out.');
  const url = new URL(as.end_session_endpoint);
  url.search = new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: returnUri, ...(hint ? { id_token_hint: hint } : {}) }).toString();
  window.location.assign(url.href);
  return new Promise<never>(() => {});
}
