/**
 * What a third-party app may do at the API (issue #34 item 3, DESIGN §5 decision in
 * services/identity/README.md "API permissions of third-party clients"): only what the user
 * consented to, under the client's ceiling (`apiPermissions`, set by an administrator). A
 * registry client asks for an API permission as a scope spelled as its name; the consent page
 * lists it; its API token carries `permissions` = the granted scopes ∩ what the user holds now ∩
 * the client's ceiling now, and `roles: []`, re-derived at every refresh. The first-party console
 * and service accounts (client_credentials) keep the user's (or their roles') full rights.
 */
import { randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import type { Browser } from 'playwright-core';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem, userHolding } from './harness';
import { axe, browserTestsRunnable, cspContext, launchChromium } from './support/browser';
import { type RpServer, startRpServer } from './support/rp-server';
import { CookieJar, freePort, payloadOf, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;

const hasChromium = browserTestsRunnable(__filename);
const browserIt = hasChromium ? it : it.skip;

describe('API permissions of third-party clients: consented scopes under a per-client ceiling', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let api: string;
  let admin: string;
  let browser: Browser | undefined;
  /** The apps' own server (another origin): their redirect URI. */
  let rp: RpServer;

  beforeAll(async () => {
    oc = await import('openid-client');
    rp = await startRpServer();
    const port = Number(process.env.OIDC_SCOPES_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    api = `${issuer}/api`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    if (hasChromium) browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
    await rp?.close();
  });

  /** A confidential code client registered by the Administrator, and its openid-client configuration. */
  async function registered(apiPermissions?: string[]): Promise<{ clientId: string; config: Config }> {
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: {
        name: `Third party ${randomUUID().slice(0, 8)}`,
        type: 'confidential',
        redirectUris: [rp.callback],
        grantTypes: ['authorization_code', 'refresh_token'],
        ...(apiPermissions ? { apiPermissions } : {}),
      },
    });
    expect(r.status).toBe(201);
    if (apiPermissions) expect(r.json.apiPermissions).toEqual(apiPermissions);
    const secret = r.json.clientSecret as string;
    const config = await oc.discovery(new URL(issuer), r.json.clientId as string, { client_secret: secret }, oc.ClientSecretBasic(secret), { execute: [oc.allowInsecureRequests] });
    return { clientId: r.json.clientId as string, config };
  }

  async function authorization(config: Config, scope: string, prompt = 'consent') {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt });
    return { url, verifier, state };
  }

  /** Code + PKCE over the hosted pages (consent allowed), the code exchanged for an API token. */
  async function apiToken(config: Config, scope: string, user?: { email: string; password: string }, jar?: CookieJar) {
    const a = await authorization(config, scope);
    const back = await signInOverHttp(a.url, { ...user, jar });
    return oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: a.verifier, expectedState: a.state }, { resource: api });
  }

  const statusAt = async (path: string, token: string) => (await fetch(`${issuer}${path}`, { headers: { authorization: `Bearer ${token}` } })).status;

  it('consent to openid alone: the API token carries no roles and no permissions (403 for an Administrator), /me still answers', async () => {
    const { config } = await registered();
    const t = await apiToken(config, 'openid');
    expect(payloadOf(t.access_token)).toEqual(expect.objectContaining({ sub: expect.any(String), aud: 'iam-api', roles: [], permissions: [] }));
    expect(await statusAt('/api/v1/users', t.access_token)).toBe(403);
    expect(await statusAt('/api/v1/me', t.access_token)).toBe(200);
  });

  browserIt('a permission in the ceiling, asked as a scope: listed on the consent page with its description, and exactly it in the token; one outside the ceiling is not granted', async () => {
    const { config } = await registered(['users.manage']);
    const a = await authorization(config, 'openid offline_access users.manage roles.manage');
    const { context, page, violations } = await cspContext(browser!);
    try {
      await page.goto(a.url.href);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Allow access' }).waitFor();
      const atApi = page.getByRole('list', { name: 'Act for you at the API' });
      expect(await atApi.getByRole('listitem').allInnerTexts()).toEqual([expect.stringMatching(/^users\.manage\b.*\S/)]);
      expect(await page.getByText('roles.manage').count()).toBe(0);
      expect(await axe(page)).toEqual([]);
      await page.getByRole('button', { name: 'Allow' }).click();
      // Back at the app's own server (another origin), the pages' CSP enforced all the way.
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    const callback = await rp.next('/callback');
    const t = await oc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: a.verifier, expectedState: a.state }, { resource: api });
    expect(payloadOf(t.access_token)).toEqual(expect.objectContaining({ roles: [], permissions: ['users.manage'] }));
    expect(await statusAt('/api/v1/users', t.access_token)).toBe(200);
    expect(await statusAt('/api/v1/roles', t.access_token)).toBe(403);
  });

  it('the ceiling shrinks: the API tokens its users hold stop, the next refresh loses the permission; a permission added to it asks for consent again', async () => {
    const { clientId, config } = await registered(['users.manage']);
    const jar = new CookieJar();
    const t = await apiToken(config, 'openid offline_access users.manage', undefined, jar);
    expect(payloadOf(t.access_token).permissions).toEqual(['users.manage']);
    expect(await statusAt('/api/v1/users', t.access_token)).toBe(200);
    expect((await http(issuer, 'PUT', `/api/v1/clients/${clientId}`, { token: admin, body: { apiPermissions: [] } })).status).toBe(200);
    await eventually(async () => (await statusAt('/api/v1/users', t.access_token)) === 401, 5_000, 100);
    // Refreshed (again, while the revocation's second lasts: a token of that second counts as older).
    let refreshToken = t.refresh_token!;
    const after = await eventually(async () => {
      const r = await oc.refreshTokenGrant(config, refreshToken, { resource: api });
      refreshToken = r.refresh_token!;
      return (await statusAt('/api/v1/me', r.access_token)) === 200 ? r : undefined;
    }, 10_000, 200);
    expect(payloadOf(after.access_token)).toEqual(expect.objectContaining({ roles: [], permissions: [] }));
    expect(await statusAt('/api/v1/users', after.access_token)).toBe(403);
    // Back in the ceiling, with another: a scope the user never consented to is asked for.
    expect((await http(issuer, 'PUT', `/api/v1/clients/${clientId}`, { token: admin, body: { apiPermissions: ['users.manage', 'roles.manage'] } })).status).toBe(200);
    const silent = await authorization(config, 'openid users.manage roles.manage', 'none');
    expect((await signInOverHttp(silent.url, { jar, signIn: false })).url.searchParams.get('error')).toBe('consent_required');
    const consented = await signInOverHttp((await authorization(config, 'openid users.manage roles.manage')).url, { jar });
    expect(consented.url.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('a user holding less than the ceiling delegates only what they hold', async () => {
    const { config } = await registered(['users.manage', 'roles.manage']);
    const holder = await userHolding(issuer, admin, ['users.manage']);
    const t = await apiToken(config, 'openid users.manage roles.manage', { email: holder.email, password: holder.password });
    expect(payloadOf(t.access_token)).toEqual(expect.objectContaining({ sub: holder.id, roles: [], permissions: ['users.manage'] }));
  });

  it('the first-party console keeps the full rights; a service account keeps its roles’ permissions', async () => {
    const console = await oc.discovery(new URL(issuer), 'iam-console', undefined, oc.None(), { execute: [oc.allowInsecureRequests] });
    const verifier = oc.randomPKCECodeVerifier();
    const url = oc.buildAuthorizationUrl(console, { redirect_uri: `${issuer}/console/`, scope: 'openid', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's' });
    const back = await signInOverHttp(url, { rpOrigin: `${issuer}/console/` });
    const t = await oc.authorizationCodeGrant(console, back.url, { pkceCodeVerifier: verifier, expectedState: 's' }, { resource: api });
    const claims = payloadOf(t.access_token);
    expect(claims.roles).toEqual(['Administrator']);
    expect(claims.permissions).toEqual(expect.arrayContaining(['users.manage', 'roles.manage', 'clients.manage']));
    expect(await statusAt('/api/v1/users', t.access_token)).toBe(200);

    const svc = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: { name: `Job ${randomUUID().slice(0, 8)}`, type: 'confidential', grantTypes: ['client_credentials'], roles: ['Administrator'] } });
    expect(svc.status).toBe(201);
    const job = await oc.discovery(new URL(issuer), svc.json.clientId as string, { client_secret: svc.json.clientSecret as string }, oc.ClientSecretBasic(svc.json.clientSecret as string), { execute: [oc.allowInsecureRequests] });
    const cc = payloadOf((await oc.clientCredentialsGrant(job)).access_token);
    expect(cc).toEqual(expect.objectContaining({ sub: svc.json.clientId, roles: ['Administrator'], permissions: expect.arrayContaining(['users.manage']) }));
  });

  it('the ceiling: only existing permissions the writer holds (400 naming the field, 403), an Administrator any', async () => {
    const manager = await userHolding(issuer, admin, ['clients.manage', 'users.manage']);
    const body = (apiPermissions: unknown) => ({ name: `App ${randomUUID().slice(0, 8)}`, type: 'public', redirectUris: [rp.callback], grantTypes: ['authorization_code'], apiPermissions });
    for (const bad of [[`no.such.${randomUUID().slice(0, 8)}`], ['openid'], ['users.manage', 'USERS.MANAGE']]) {
      const r = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: body(bad) });
      expect({ bad, status: r.status, fields: (r.json.errors as Array<{ field: string }>).map((e) => e.field) }).toEqual({ bad, status: 400, fields: [expect.stringMatching(/^body\.apiPermissions/)] });
    }
    expect((await http(issuer, 'POST', '/api/v1/clients', { token: manager.token, body: body(['roles.manage']) })).status).toBe(403);
    const ok = await http(issuer, 'POST', '/api/v1/clients', { token: manager.token, body: body(['users.manage']) });
    expect(ok.status).toBe(201);
    expect(ok.json.apiPermissions).toEqual(['users.manage']);
    expect((await http(issuer, 'PUT', `/api/v1/clients/${ok.json.clientId}`, { token: manager.token, body: { apiPermissions: ['users.manage', 'audit.read'] } })).status).toBe(403);
    // A client whose ceiling holds more than the writer may not be changed by it.
    const wide = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: body(['users.manage', 'audit.read']) });
    expect((await http(issuer, 'PUT', `/api/v1/clients/${wide.json.clientId}`, { token: manager.token, body: { name: 'Mine now' } })).status).toBe(403);
    expect((await http(issuer, 'PUT', `/api/v1/clients/${wide.json.clientId}`, { token: admin, body: { apiPermissions: ['Users.Manage'] } })).json.apiPermissions).toEqual(['users.manage']);
  });

  it('no API scope asked by a client with a ceiling: its refreshed API token holds nothing', async () => {
    const { config } = await registered(['users.manage']);
    const t = await apiToken(config, 'openid offline_access');
    expect(payloadOf(t.access_token)).toEqual(expect.objectContaining({ roles: [], permissions: [] }));
    const refreshed = await oc.refreshTokenGrant(config, t.refresh_token!, { resource: api });
    expect(payloadOf(refreshed.access_token)).toEqual(expect.objectContaining({ roles: [], permissions: [] }));
    expect(await statusAt('/api/v1/users', refreshed.access_token)).toBe(403);
  });
});
