/**
 * The OpenID provider end to end, driven by a certified relying party (openid-client) through
 * the gateway, the hosted pages filled in Chromium (playwright-core) and checked with axe-core.
 * Clients come from an in-memory registry (StaticClientLookup); they are third party (their
 * users' API tokens carry only the API permissions consented to as scopes) but for `rp-spa`.
 * Checks ported from the OpenID Foundation's Basic OP and Config OP plans are named `[OIDCC-…]`
 * (services/identity/README.md lists which are covered).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OAuthClient, StaticClientLookup } from '@iam/identity';
import { eventually } from '@iam/platform/testing';
import type * as openidClient from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { ADMIN, type TestSystem, startTestSystem } from './harness';
import { CookieJar, signInOverHttp } from './support/oidc-rp';
import { type AxeViolation, CHROMIUM, axe, hasChromium as hasBrowser, launchChromium } from './support/browser';

type OpenIdClient = typeof openidClient;

if (!hasBrowser) console.warn(`OpenID provider browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
/** A test that drives the hosted pages in Chromium. */
const browserIt = hasBrowser ? it : it.skip;

const REDIRECT = 'http://127.0.0.1:21999/callback';
const now = new Date();
const base: Omit<OAuthClient, 'clientId' | 'name' | 'type' | 'grantTypes'> = {
  redirectUris: [REDIRECT],
  postLogoutRedirectUris: ['http://127.0.0.1:21999/signed-out'],
  roles: [],
  requirePar: false,
  dpopBound: false,
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
  firstParty: false,
  builtIn: false,
  createdAt: now,
  updatedAt: now,
};
const WEB_SECRET = randomBytes(24).toString('base64url');
/** Third party: its users may delegate users.manage to it (asked as a scope), nothing else. */
const WEB: OAuthClient = { ...base, clientId: 'rp-web', name: 'Reporting app', type: 'confidential', grantTypes: ['authorization_code', 'refresh_token'], apiPermissions: ['users.manage'] };
const SERVICE_SECRET = randomBytes(24).toString('base64url');
const SERVICE: OAuthClient = { ...base, clientId: 'svc-reports', name: 'Reports job', type: 'confidential', grantTypes: ['client_credentials'], redirectUris: [], roles: ['Reporter'] };
const DOOMED_SECRET = randomBytes(24).toString('base64url');
const DOOMED: OAuthClient = { ...WEB_BASE(), clientId: 'rp-doomed', name: 'Doomed app' };
function WEB_BASE(): Omit<OAuthClient, 'clientId' | 'name'> {
  return { ...base, type: 'confidential', grantTypes: ['authorization_code', 'refresh_token'] };
}
const DOOMED_TWIN_SECRET = randomBytes(24).toString('base64url');
/** Another confidential client (introspection and revocation of tokens not its own). */
const DOOMED_TWIN: OAuthClient = { ...WEB_BASE(), clientId: 'rp-other', name: 'Other app', apiPermissions: ['users.manage'] };
const PAR_SECRET = randomBytes(24).toString('base64url');
const PAR_ONLY: OAuthClient = { ...WEB_BASE(), clientId: 'rp-par', name: 'PAR app', requirePar: true };
const DEVICE: OAuthClient = {
  ...base,
  clientId: 'rp-tv',
  name: 'Living-room TV',
  type: 'public',
  redirectUris: [],
  grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
  apiPermissions: ['users.manage'],
};
const SPA: OAuthClient = { ...base, clientId: 'rp-spa', name: 'First-party app', type: 'public', grantTypes: ['authorization_code', 'refresh_token'], firstParty: true };

/** The OAuth error code of a refused call (a body error, or a WWW-Authenticate challenge for client authentication). */
async function oauthError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const e = err as { error?: string; cause?: Array<{ parameters?: { error?: string } }> | { error?: string } };
    if (e.error) return e.error;
    if (Array.isArray(e.cause)) return e.cause[0]?.parameters?.error;
    return e.cause?.error;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}



describe('OpenID provider (openid-client as RP, Chromium for the pages)', () => {
  let system: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let browser: Browser;
  let userDataDir: string;
  const clients = new StaticClientLookup([{ client: WEB, secret: WEB_SECRET }, { client: SPA }, { client: SERVICE, secret: SERVICE_SECRET }, { client: DOOMED, secret: DOOMED_SECRET },
    { client: PAR_ONLY, secret: PAR_SECRET },
    { client: DOOMED_TWIN, secret: DOOMED_TWIN_SECRET },
    { client: DEVICE },
  ]);

  beforeAll(async () => {
    oc = await import('openid-client');
    // OIDC_E2E_PORT: a fixed port where the machine asks for one (the issuer must be known before start).
    const port = Number(process.env.OIDC_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer, MFA_REQUIRED_ROLES: 'Secured' }, identityClients: clients });
    userDataDir = mkdtempSync(join(tmpdir(), 'oidc-chromium-'));
    if (hasBrowser) browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  const discover = (c: OAuthClient, secret?: string): ReturnType<OpenIdClient['discovery']> =>
    oc.discovery(new URL(issuer), c.clientId, secret ? { client_secret: secret } : undefined, secret ? oc.ClientSecretBasic(secret) : oc.None(), {
      execute: [oc.allowInsecureRequests],
    });

  /** Drives the hosted pages in a fresh browser context; answers the URL the provider redirected back to. */
  async function signInInBrowser(authUrl: URL, opts: { consent?: boolean; password?: string; check?: (page: Page, step: string) => Promise<void> } = {}): Promise<URL> {
    // axe-core is evaluated into the page, which the pages' CSP (checked on its own) would refuse.
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, bypassCSP: true });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    let callback: URL | undefined;
    await page.route('http://127.0.0.1:21999/**', async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'ok' });
    });
    try {
      await page.goto(authUrl.href);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await opts.check?.(page, 'sign-in');
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(opts.password ?? ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      if (opts.consent) {
        await page.getByRole('heading', { name: 'Allow access' }).waitFor();
        await opts.check?.(page, 'consent');
        await page.getByRole('button', { name: 'Allow' }).click();
      }
      await page.waitForURL((u) => u.href.startsWith('http://127.0.0.1:21999/'));
      return callback ?? new URL(page.url());
    } finally {
      await context.close();
    }
  }

  /** An authorization request of `c` with PKCE; answers the URL and the verifier. */
  async function authorization(config: Awaited<ReturnType<OpenIdClient['discovery']>>, extra: Record<string, string> = {}) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email offline_access',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
      ...extra,
    });
    return { url, verifier, state };
  }

  /** A REST call as the administrator. */
  async function asAdmin(method: string, path: string, body?: unknown): Promise<Response> {
    const login = await fetch(`${issuer}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const token = ((await login.json()) as { token: string }).token;
    const authorization = `Bearer ${token}`;
    return fetch(`${issuer}${path}`, body === undefined ? { method, headers: { authorization } } : { method, headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(body) });
  }

  /** A new user to sign in as (with `roles`; `Secured` is MFA_REQUIRED_ROLES here and made when asked for). */
  async function newUser(roles: string[] = []): Promise<{ userId: string; email: string; password: string }> {
    if (roles.includes('Secured')) expect([201, 409]).toContain((await asAdmin('POST', '/api/v1/roles', { name: 'Secured', description: 'must use a second factor' })).status);
    const email = `oidc-${randomBytes(4).toString('hex')}@example.com`;
    const password = `Oidc!${randomBytes(8).toString('hex')}#Aa9`;
    const created = await asAdmin('POST', '/api/v1/users', { firstName: 'Grace', lastName: 'Hopper', email, password, ...(roles.length ? { roles } : {}) });
    expect(created.status).toBe(201);
    return { userId: ((await created.json()) as { id: string }).id, email, password };
  }

  it('no PKCE and `plain` are invalid_request; a redirect URI not registered exactly is refused on a page, never redirected to', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const noPkce = new URL((await authorization(config)).url);
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    let r = await fetch(noPkce, { redirect: 'manual' });
    let back = new URL(r.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('iss')).toBe(issuer);
    const plain = new URL((await authorization(config)).url);
    plain.searchParams.set('code_challenge_method', 'plain');
    r = await fetch(plain, { redirect: 'manual' });
    back = new URL(r.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    for (const wrong of ['http://127.0.0.1:21999/callback/', 'http://127.0.0.1:21999/callback?x=1', 'http://evil.example/callback']) {
      const u = new URL((await authorization(config)).url);
      u.searchParams.set('redirect_uri', wrong);
      r = await fetch(u, { redirect: 'manual' });
      expect(r.status).toBe(400);
      expect(r.headers.get('location')).toBeNull();
      expect(await r.text()).toContain('redirect_uri');
    }
  });

  it('[OIDCC-basic] a code is single use: the second exchange fails and revokes what the first issued', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url);
    const tokens = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    await expect(oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a refresh token is rotated; presenting a rotated one again once its successor was used revokes the grant', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url);
    const first = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const second = await oc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toBeDefined();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // (A retry of `first` before `second` is used gets the same answer: oidc-refresh-retry.e2e.)
    const third = await oc.refreshTokenGrant(config, second.refresh_token!);
    await expect(oc.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oc.refreshTokenGrant(config, third.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The reuse is in the audit trail, as a REST refresh token's is: the user, the client, the revoked grant.
    const admin = ((await (await fetch(`${issuer}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as { token: string }).token;
    const sub = first.claims()!.sub;
    const reuse = await eventually(async () => {
      const r = await fetch(`${issuer}/api/v1/audit-events?action=refresh.reuse_detected&targetId=${sub}`, { headers: { authorization: `Bearer ${admin}` } });
      const items = ((await r.json()) as { items: Array<{ changes: Array<{ field: string; after?: unknown }> }> }).items;
      return items.find((i) => i.changes.some((c) => c.field === 'client' && c.after === WEB.clientId));
    });
    expect(reuse.changes.map((c) => c.field)).toEqual(['client', 'grant']);
  });

  it('one refresh token presented several times at once: one set of tokens at most (a later one gets it again), the others invalid_grant', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url);
    const first = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const answers = await Promise.allSettled(Array.from({ length: 4 }, () => oc.refreshTokenGrant(config, first.refresh_token!)));
    const issued = answers.flatMap((r) => (r.status === 'fulfilled' ? [r.value.refresh_token] : []));
    expect(new Set(issued).size).toBeLessThanOrEqual(1);
    for (const r of answers) if (r.status === 'rejected') expect(r.reason).toMatchObject({ error: 'invalid_grant' });
  });

  it('a wrong password answers the sign-in page again with the same message as REST login, and no code', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url, { password: 'not-the-password' });
    expect(end.status).toBe(401);
    expect(end.body).toContain('The email or password is incorrect.');
    expect(end.body).toContain('role="alert"');
  });

  it('client_credentials: a service account gets an API token with sub = its client id and its roles; the gateway checks its permissions', async () => {
    const config = await discover(SERVICE, SERVICE_SECRET);
    const t = await oc.clientCredentialsGrant(config);
    const payload = JSON.parse(Buffer.from(t.access_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(payload).toEqual(expect.objectContaining({ iss: issuer, sub: SERVICE.clientId, aud: 'iam-api', client_id: SERVICE.clientId, roles: ['Reporter'] }));
    // Authenticated (not 401) but without users.read: 403.
    const users = await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(users.status).toBe(403);
    // A wrong secret: invalid_client.
    expect(await oauthError(oc.clientCredentialsGrant(await discover(SERVICE, 'not-the-secret')))).toBe('invalid_client');
  });

  it('introspection and revocation (confidential clients, their own tokens only): a refresh token is active until revoked; an API JWT to its own client only', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url);
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const active = await oc.tokenIntrospection(config, t.refresh_token!);
    expect(active).toEqual(expect.objectContaining({ active: true, client_id: WEB.clientId, iss: issuer, scope: 'openid email offline_access' }));
    // Another confidential client learns nothing of it, and cannot revoke it.
    const other = await discover(DOOMED_TWIN, DOOMED_TWIN_SECRET);
    expect(await oc.tokenIntrospection(other, t.refresh_token!)).toEqual({ active: false });
    await oc.tokenRevocation(other, t.refresh_token!).catch(() => undefined);
    expect((await oc.tokenIntrospection(config, t.refresh_token!)).active).toBe(true);
    await oc.tokenRevocation(config, t.refresh_token!);
    expect((await oc.tokenIntrospection(config, t.refresh_token!)).active).toBe(false);
    // A structured (JWT) access token is introspectable too (issue #36: the library alone refused
    // it), by its own client; another client learns nothing (oidc-introspection.e2e has the rest).
    const service = await discover(SERVICE, SERVICE_SECRET);
    const svc = await oc.clientCredentialsGrant(service);
    expect(await oc.tokenIntrospection(service, svc.access_token)).toEqual(expect.objectContaining({ active: true, client_id: SERVICE.clientId, sub: SERVICE.clientId }));
    expect(await oc.tokenIntrospection(config, svc.access_token)).toEqual({ active: false });
  });

  it('a deleted client: its refresh tokens stop working (the registry no longer knows it)', async () => {
    const config = await discover(DOOMED, DOOMED_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url);
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    clients.remove(DOOMED.clientId);
    expect(await oauthError(oc.refreshTokenGrant(config, t.refresh_token!))).toBe('invalid_client');
  });

  it('a revoked subject (the user deleted): the grants and refresh tokens of the user at the provider end', async () => {
    const { userId, email, password } = await newUser();
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config);
    const end = await signInOverHttp(a.url, { email, password });
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    expect(t.claims()!.sub).toBe(userId);
    const del = await asAdmin('DELETE', `/api/v1/users/${userId}`);
    expect(del.status).toBe(204);
    // The deletion reaches identity as an event, then its subject revocation ends the provider's records.
    const deadline = Date.now() + 10_000;
    let rows = 1;
    while (Date.now() < deadline) {
      const [r] = await system.identity.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM oidc_payloads WHERE account_id = $1`, [userId]);
      rows = r!.n;
      if (rows === 0) break;
      await new Promise((r2) => setTimeout(r2, 100));
    }
    expect(rows).toBe(0);
    await expect(oc.refreshTokenGrant(config, t.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('MFA_REQUIRED_ROLES reaches a provider session already open: given the role after a password-only sign-in, the refresh token is invalid_grant and prompt=none login_required', async () => {
    expect([201, 409]).toContain((await asAdmin('POST', '/api/v1/roles', { name: 'Secured', description: 'must use a second factor' })).status);
    const { userId, email, password } = await newUser();
    const config = await discover(WEB, WEB_SECRET);
    const jar = new CookieJar();
    const a = await authorization(config);
    const end = await signInOverHttp(a.url, { email, password, jar });
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const refreshed = await oc.refreshTokenGrant(config, t.refresh_token!);
    expect((await asAdmin('PUT', `/api/v1/users/${userId}`, { roles: ['Secured'] })).status).toBe(200);
    // Identity reads roles through its principal cache, dropped by the directory's event.
    // A refresh token is rotated on use: each success hands on its successor.
    let refresh = refreshed.refresh_token!;
    await eventually(async () => {
      const grant = oc.refreshTokenGrant(config, refresh);
      const error = await oauthError(grant);
      if (error === undefined) refresh = (await grant).refresh_token!;
      return error === 'invalid_grant';
    }, 10_000, 200);
    const silent = await signInOverHttp((await authorization(config, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(silent.url.searchParams.get('error')).toBe('login_required');
  });

  it('revoke (POST /api/v1/auth/revoke) with a provider-issued API token ends the account\'s provider sessions and refresh tokens at once, not only their rows in the list', async () => {
    const { email, password } = await newUser();
    const config = await discover(WEB, WEB_SECRET);
    const jar = new CookieJar();
    const a = await authorization(config);
    const end = await signInOverHttp(a.url, { email, password, jar });
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const api = await oc.refreshTokenGrant(config, t.refresh_token!, { resource: `${issuer}/api` });
    const revoked = await fetch(`${issuer}/api/v1/auth/revoke`, { method: 'POST', headers: { authorization: `Bearer ${api.access_token}` } });
    expect(revoked.status).toBe(204);
    // At once: no event to wait for.
    expect(await oauthError(oc.refreshTokenGrant(config, api.refresh_token!))).toBe('invalid_grant');
    const silent = await signInOverHttp((await authorization(config, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(silent.url.searchParams.get('error')).toBe('login_required');
  });

  it('hosted factor step: reloaded after its mfa token expired, the enrolment goes back to the sign-in page (401) and its options answer 401 JSON, never a 500', async () => {
    const { userId, email, password } = await newUser(['Secured']);
    const jar = new CookieJar();
    const config = await discover(WEB, WEB_SECRET);
    const enrol = await signInOverHttp((await authorization(config)).url, { email, password, jar });
    expect(enrol.status).toBe(200);
    expect(enrol.body).toContain('Set up a second factor');
    // The page answered the sign-in form's POST: the interaction is the URL without its step.
    const interaction = enrol.url.href.replace(/\/login$/, '');
    await system.identity.dataSource.query(`UPDATE mfa_challenges SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [userId]);
    const options = await fetch(`${interaction}/factor/register-options`, { method: 'POST', headers: { cookie: jar.header() } });
    expect(options.status).toBe(401);
    expect(options.headers.get('content-type')).toContain('application/json');
    const again = await fetch(interaction, { headers: { cookie: jar.header() } });
    expect(again.status).toBe(401);
    const page = await again.text();
    expect(page).toContain('The sign-in took too long');
    expect(page).toContain('name="password"');
  });

  it('[OIDCC-config] discovery names the issuer, the endpoints under /oidc, the gateway JWKS, code only, S256 only, and iss in responses', async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const d = (await res.json()) as Record<string, unknown>;
    expect(d.issuer).toBe(issuer);
    expect(d.authorization_endpoint).toBe(`${issuer}/oidc/auth`);
    expect(d.token_endpoint).toBe(`${issuer}/oidc/token`);
    expect(d.userinfo_endpoint).toBe(`${issuer}/oidc/me`);
    expect(d.jwks_uri).toBe(`${issuer}/.well-known/jwks.json`);
    expect(d.response_types_supported).toEqual(['code']);
    expect(d.code_challenge_methods_supported).toEqual(['S256']);
    expect(d.authorization_response_iss_parameter_supported).toBe(true);
    expect(d.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access']));
    expect(d.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']));
    expect(d.grant_types_supported).not.toContain('implicit');
    expect(d.grant_types_supported).not.toContain('password');
    // [OIDCC-config] the JWKS the document names holds the key that signs ID tokens (same as REST tokens).
    const jwks = (await (await fetch(String(d.jwks_uri))).json()) as { keys: Array<{ kid: string; d?: string }> };
    expect(jwks.keys.length).toBeGreaterThan(0);
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
  });

  browserIt('[OIDCC-basic] code + PKCE: sign-in and consent pages (accessible, strict headers), ID token validated, userinfo, an API token the gateway accepts', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const nonce = oc.randomNonce();
    const authUrl = oc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile email offline_access users.manage',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      prompt: 'consent',
    });
    const seen: Record<string, AxeViolation[]> = {};
    const callback = await signInInBrowser(authUrl, {
      consent: true,
      check: async (page, step) => {
        seen[step] = await axe(page);
        const res = await fetch(page.url(), { headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
        expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      },
    });
    expect(seen).toEqual({ 'sign-in': [], consent: [] });
    // RFC 9207: the authorization response names the issuer.
    expect(callback.searchParams.get('iss')).toBe(issuer);
    const tokens = await oc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    expect(claims.iss).toBe(issuer);
    expect(claims.aud).toBe(WEB.clientId);
    expect(claims.email).toBe(ADMIN.email);
    expect(typeof claims.email_verified).toBe('boolean');
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.acr).toBe('urn:iam:acr:pwd');
    expect(typeof claims.auth_time).toBe('number');
    expect(tokens.refresh_token).toBeDefined();
    // [OIDCC-basic] userinfo with the access token of the code exchange: the same subject.
    const info = await oc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toEqual(expect.objectContaining({ sub: claims.sub, email: ADMIN.email }));
    // An access token for the API (RFC 8707 resource = JWT_AUDIENCE): an RFC 9068 JWT the gateway accepts.
    const api = await oc.refreshTokenGrant(config, tokens.refresh_token!, { resource: `${issuer}/api` });
    const [header, payload] = api.access_token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(header!.typ).toBe('at+jwt');
    // A third-party client: the permissions the user consented to (within its ceiling), no roles.
    expect(payload).toEqual(expect.objectContaining({ iss: issuer, aud: 'iam-api', sub: claims.sub, client_id: WEB.clientId, email: ADMIN.email, roles: [], permissions: ['users.manage'] }));
    const users = await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${api.access_token}` } });
    expect(users.status).toBe(200);
  }, 60_000);
  it('[OIDCC-basic prompt=none, RP-initiated logout] a signed-in agent gets a code with prompt=none; after logout at the provider, login_required', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const jar = new CookieJar();
    const a = await authorization(config, { scope: 'openid email offline_access users.manage' });
    const end = await signInOverHttp(a.url, { jar });
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    // An API token of this session (a JWT the gateway checks itself), taken before the logout.
    const api = await oc.refreshTokenGrant(config, t.refresh_token!, { resource: `${issuer}/api` });
    const apiStatus = async () => (await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${api.access_token}` } })).status;
    expect(await apiStatus()).toBe(200);
    // oidcc-prompt-none-logged-in: the session answers without a page.
    const silent = await authorization(config, { prompt: 'none', scope: 'openid email' });
    const back = await signInOverHttp(silent.url, { jar });
    expect(back.url.searchParams.get('code')).toBeTruthy();
    expect(back.url.searchParams.get('iss')).toBe(issuer);
    // oidcc-prompt-login: prompt=login shows the sign-in page again although the session is alive.
    const again = await signInOverHttp((await authorization(config, { prompt: 'login', scope: 'openid' })).url, { jar, signIn: false });
    expect(again.status).toBe(200);
    expect(again.body).toContain('<h1>Sign in</h1>');

    // RP-initiated logout: the provider asks, the user confirms, the agent goes to the registered post-logout URI.
    const endUrl = oc.buildEndSessionUrl(config, { id_token_hint: t.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:21999/signed-out', state: 'bye' });
    const ask = await jar.fetch(endUrl);
    expect(ask.status).toBe(200);
    const page = await ask.text();
    expect(page).toContain('Sign out');
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"|<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(page);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1];
    expect(xsrf).toBeDefined();
    const confirmed = await jar.fetch(new URL((action?.[1] ?? action?.[2])!, issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    expect(confirmed.status).toBe(303);
    // Denylisted before the redirect left (the gateways learn it from the event within a second).
    const { jti } = JSON.parse(Buffer.from(api.access_token.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string };
    expect(await system.identity.dataSource.query('SELECT 1 FROM revoked_access_tokens WHERE jti = $1', [jti])).toHaveLength(1);
    const signedOut = new URL(confirmed.headers.get('location')!);
    expect(`${signedOut.origin}${signedOut.pathname}`).toBe('http://127.0.0.1:21999/signed-out');
    expect(signedOut.searchParams.get('state')).toBe('bye');
    // oidcc-prompt-none-not-logged-in: the session is gone.
    const after = await signInOverHttp((await authorization(config, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(after.url.searchParams.get('error')).toBe('login_required');
    expect(after.url.searchParams.get('code')).toBeNull();
    // The session's access tokens stop at the gateway (the session ended with the logout, as from
    // the sessions list); the refresh token of the grant lives on (logout ends the provider session,
    // not offline grants).
    await eventually(async () => (await apiStatus()) === 401, 5_000, 100);
    await expect(oc.refreshTokenGrant(config, api.refresh_token!)).resolves.toBeDefined();
  });

  it('[RP-initiated logout, one client] "Stay signed in": the API tokens the session issued to that client stop; the session and the other client\'s go on', async () => {
    const jar = new CookieJar();
    const resource = `${issuer}/api`;
    const web = await discover(WEB, WEB_SECRET);
    const other = await discover(DOOMED_TWIN, DOOMED_TWIN_SECRET);
    const a = await authorization(web, { scope: 'openid email offline_access users.manage' });
    const t = await oc.authorizationCodeGrant(web, (await signInOverHttp(a.url, { jar })).url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const b = await authorization(other, { scope: 'openid email offline_access users.manage' });
    const u = await oc.authorizationCodeGrant(other, (await signInOverHttp(b.url, { jar })).url, { pkceCodeVerifier: b.verifier, expectedState: b.state });
    const webApi = await oc.refreshTokenGrant(web, t.refresh_token!, { resource });
    const otherApi = await oc.refreshTokenGrant(other, u.refresh_token!, { resource });
    const status = async (token: string) => (await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect([await status(webApi.access_token), await status(otherApi.access_token)]).toEqual([200, 200]);

    // The web client asks to sign out; the user stays signed in to the provider.
    const ask = await jar.fetch(oc.buildEndSessionUrl(web, { id_token_hint: t.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:21999/signed-out' }));
    const page = await ask.text();
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"|<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(page);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1];
    const stayed = await jar.fetch(new URL((action?.[1] ?? action?.[2])!, issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf! }).toString(),
    });
    expect(stayed.status).toBe(303);
    await eventually(async () => (await status(webApi.access_token)) === 401, 5_000, 100);
    // The other client's token and the provider session are untouched.
    expect(await status(otherApi.access_token)).toBe(200);
    const silent = await signInOverHttp((await authorization(other, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(silent.url.searchParams.get('code')).toBeTruthy();
  });

  it('[userinfo] GET with the bearer header, POST with the header, and a revoked access token refused', async () => {
    const config = await discover(WEB, WEB_SECRET);
    const a = await authorization(config, { scope: 'openid email profile' });
    const end = await signInOverHttp(a.url);
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const sub = t.claims()!.sub;
    expect(await oc.fetchUserInfo(config, t.access_token, sub)).toEqual(expect.objectContaining({ sub, email: ADMIN.email, given_name: expect.any(String) }));
    // oidcc-userinfo-post-header
    const post = await fetch(`${issuer}/oidc/me`, { method: 'POST', headers: { authorization: `Bearer ${t.access_token}` } });
    expect(post.status).toBe(200);
    expect(((await post.json()) as { sub: string }).sub).toBe(sub);
    // The userinfo token is opaque: revocation ends it at once.
    await oc.tokenRevocation(config, t.access_token);
    expect(await oauthError(oc.fetchUserInfo(config, t.access_token, sub))).toBe('invalid_token');
  });

  it('PAR (RFC 9126): a client that must push is refused a plain request; the pushed request_uri signs in once', async () => {
    const config = await discover(PAR_ONLY, PAR_SECRET);
    const plain = await authorization(config);
    const r = await fetch(plain.url, { redirect: 'manual' });
    const refusedAt = r.headers.get('location') ? new URL(r.headers.get('location')!).searchParams.get('error') : String(r.status);
    expect(['invalid_request', '400']).toContain(refusedAt);
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const pushed = await oc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
    });
    expect([...pushed.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(pushed.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const end = await signInOverHttp(pushed);
    const t = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: verifier, expectedState: state });
    expect(t.claims()!.email).toBe(ADMIN.email);
    // The request_uri is single use.
    const reused = await fetch(pushed, { redirect: 'manual' });
    const reusedError = reused.headers.get('location') ? new URL(reused.headers.get('location')!).searchParams.get('error') : String(reused.status);
    expect(reusedError).not.toBeNull();
    expect(reused.headers.get('location') ?? '').not.toContain('code=');
  });

  browserIt('device flow (RFC 8628): the user code page (accessible) filled in Chromium, the device polls for its tokens; a wrong code is refused', async () => {
    const config = await discover(DEVICE);
    const d = await oc.initiateDeviceAuthorization(config, { scope: 'openid email offline_access users.manage' });
    expect(d.verification_uri).toBe(`${issuer}/oidc/device`);
    expect(d.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    // The device polls while the user goes through the pages.
    const polled = oc.pollDeviceAuthorizationGrant(config, d);
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, bypassCSP: true });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    try {
      await page.goto(d.verification_uri);
      await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.getByLabel('Code').fill('BCDF-GHJK');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
      await expect(page.getByText('The code is not valid or has expired.').isVisible()).resolves.toBe(true);
      await page.getByLabel('Code').fill(d.user_code);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'Confirm the device' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await expect(page.getByText(d.user_code).isVisible()).resolves.toBe(true);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Allow access' }).waitFor();
      expect(await page.getByRole('list', { name: 'Act for you at the API' }).getByRole('listitem').allInnerTexts()).toEqual([expect.stringMatching(/^users\.manage/)]);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    } finally {
      await context.close();
    }
    const t = await polled;
    expect(t.claims()!.email).toBe(ADMIN.email);
    expect(t.refresh_token).toBeDefined();
    // Its API token: what the user delegated on the consent page, re-derived at the refresh (no roles).
    const api = await oc.refreshTokenGrant(config, t.refresh_token!, { resource: `${issuer}/api` });
    expect(JSON.parse(Buffer.from(api.access_token.split('.')[1]!, 'base64url').toString('utf8'))).toEqual(expect.objectContaining({ roles: [], permissions: ['users.manage'] }));
    // The device code is single use.
    expect(await oauthError(oc.pollDeviceAuthorizationGrant(config, { ...d, interval: 0 }))).toBeDefined();
  }, 60_000);
});
