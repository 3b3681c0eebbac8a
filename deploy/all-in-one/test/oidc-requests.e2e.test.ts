/**
 * The OpenID provider's answers to requests an attacker shapes (issue #34 item 5, item 8 and the
 * "also seen" points), through the gateway, openid-client as the relying party:
 * - a refresh refused (invalid_target: a wrong `resource`) writes nothing, so the client's next,
 *   correct refresh of the same token works and is not taken for reuse;
 * - discovery names PUBLIC_URL's endpoints whatever `Host` the request came with, at the gateway
 *   and at identity's own listener;
 * - over-long parameters of an authorization, pushed or device request are `invalid_request`
 *   and store nothing (rows of the real PostgreSQL counted);
 * - an expired sign-in (interaction) is a clear 400 page, not a 500;
 * - the device pages answer anonymous input (no provider cookie, a made-up resume) with the
 *   hosted 400 page: no 500, no stack trace, nothing logged as an error.
 */
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import type { OAuthClient } from '@iam/identity';
import { StaticClientLookup } from '../../../services/identity/src/testing/static-client-lookup';
import type * as openidClient from 'openid-client';
import { type TestSystem, startTestSystem } from './harness';
import { freePort } from './support/nats';
import { signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

const REDIRECT = 'http://127.0.0.1:21999/callback';
const SECRET = randomBytes(24).toString('base64url');
const now = new Date();
const base: Omit<OAuthClient, 'clientId' | 'name' | 'type' | 'grantTypes'> = {
  redirectUris: [REDIRECT],
  postLogoutRedirectUris: [],
  roles: [],
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
  requirePar: false,
  dpopBound: false,
  firstParty: true,
  builtIn: false,
  createdAt: now,
  updatedAt: now,
};
/** A first-party app (no consent page), code + refresh. */
const APP: OAuthClient = { ...base, clientId: 'rp-requests', name: 'Requests app', type: 'confidential', grantTypes: ['authorization_code', 'refresh_token'] };
/** A TV (device flow, public). */
const TV: OAuthClient = { ...base, clientId: 'rp-tv', name: 'TV', type: 'public', redirectUris: [], grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] };

/** The OAuth error code of a refused call. */
async function oauthError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as { error?: string }).error;
  }
}

/** A request with headers fetch would not send as given (Host). */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('OpenID provider: requests shaped by an attacker', () => {
  let sys: TestSystem;
  let oc: typeof openidClient;
  let issuer: string;
  /** identity's own provider listener (what the gateway proxies to). */
  let opUrl: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    oc = await import('openid-client');
    const [port, opPort] = [await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${port}`;
    opUrl = `http://127.0.0.1:${opPort}`;
    sys = await startTestSystem({
      env: { PORT: String(port), PUBLIC_URL: issuer, IDENTITY_OP_PORT: String(opPort) },
      identityClients: new StaticClientLookup([{ client: APP, secret: SECRET }, { client: TV }]),
      logLines,
    });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const discover = () => oc.discovery(new URL(issuer), APP.clientId, { client_secret: SECRET }, oc.ClientSecretBasic(SECRET), { execute: [oc.allowInsecureRequests] });
  const rows = async (kind: string) => (await sys.identity.dataSource.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM oidc_payloads WHERE kind = $1', [kind]))[0]!.n;
  const events = async (subject: string) =>
    (await sys.identity.dataSource.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM outbox_events WHERE subject = $1', [subject]))[0]!.n;

  /** A signed-in administrator's tokens through the app (code + PKCE). */
  async function signedIn(config: Awaited<ReturnType<typeof discover>>) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    return oc.authorizationCodeGrant(config, (await signInOverHttp(url)).url, { pkceCodeVerifier: verifier, expectedState: state });
  }

  it('a refresh refused as invalid_target spends nothing: the same refresh token with the right resource then works, and no reuse is detected', async () => {
    const config = await discover();
    const t = await signedIn(config);
    const reused = await events(SUBJECTS.refreshReuseDetected);
    expect(await oauthError(oc.refreshTokenGrant(config, t.refresh_token!, { resource: 'https://elsewhere.example/api' }))).toBe('invalid_target');
    const api = await oc.refreshTokenGrant(config, t.refresh_token!, { resource: `${issuer}/api` });
    expect(api.access_token).toBeTruthy();
    expect((await fetch(`${issuer}/api/v1/me`, { headers: { authorization: `Bearer ${api.access_token}` } })).status).toBe(200);
    // The grant goes on (its successor refreshes), and nothing was taken for reuse.
    expect((await oc.refreshTokenGrant(config, api.refresh_token!)).access_token).toBeTruthy();
    expect(await events(SUBJECTS.refreshReuseDetected)).toBe(reused);
  });
  it('discovery names PUBLIC_URL whatever Host or X-Forwarded-Host the request came with, at the gateway and at identity itself', async () => {
    for (const [url, headers] of [
      [`${issuer}/.well-known/openid-configuration`, { host: 'evil.example' }],
      [`${issuer}/.well-known/openid-configuration`, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }],
      [`${opUrl}/.well-known/openid-configuration`, { host: 'evil.example', 'x-forwarded-host': 'evil.example' }],
    ] as const) {
      const r = await raw(url, { headers });
      expect(r.status).toBe(200);
      const doc = JSON.parse(r.text) as Record<string, unknown>;
      const urls = Object.entries(doc).filter(([k, v]) => k.endsWith('_endpoint') && typeof v === 'string');
      expect(urls.length).toBeGreaterThan(5);
      for (const [k, v] of urls) expect({ k, v }).toEqual({ k, v: expect.stringMatching(new RegExp(`^${issuer}/`)) });
      expect(doc.issuer).toBe(issuer);
    }
  });

  /** An authorization request of the app (PKCE S256), with `extra` parameters. */
  function authorizationUrl(extra: Record<string, string> = {}): URL {
    const u = new URL(`${issuer}/oidc/auth`);
    const params = { client_id: APP.clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'st-1', ...extra };
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u;
  }

  it('over-long parameters of an authorization request: invalid_request to the client, no interaction stored', async () => {
    const before = await rows('Interaction');
    const tooLong: Array<Record<string, string>> = [{ nonce: 'n'.repeat(14_000) }, { nonce: 'n'.repeat(513) }, { login_hint: `${'a'.repeat(320)}@example.com` }, { ui_locales: 'en '.repeat(60) }];
    for (const extra of tooLong) {
      const r = await fetch(authorizationUrl(extra), { redirect: 'manual' });
      expect(r.status).toBe(303);
      const back = new URL(r.headers.get('location')!);
      expect({ at: back.origin + back.pathname, error: back.searchParams.get('error'), state: back.searchParams.get('state') }).toEqual({ at: REDIRECT, error: 'invalid_request', state: 'st-1' });
    }
    // An over-long state is not echoed back; the whole request is bounded too (parameters the provider ignores included).
    const state = await fetch(authorizationUrl({ state: 's'.repeat(600) }), { redirect: 'manual' });
    expect(new URL(state.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    expect(new URL(state.headers.get('location')!).searchParams.has('state')).toBe(false);
    const many = authorizationUrl();
    for (let i = 0; i < 20; i++) many.searchParams.set(`x${i}`, 'y'.repeat(500));
    expect(new URL((await fetch(many, { redirect: 'manual' })).headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    expect(await rows('Interaction')).toBe(before);
    // A request within the bounds stores its interaction, for no longer than a sign-in may take.
    const ok = await fetch(authorizationUrl({ nonce: 'n'.repeat(512), login_hint: 'someone@example.com' }), { redirect: 'manual' });
    expect(ok.headers.get('location')).toMatch(/^\/oidc\/interaction\//);
    expect(await rows('Interaction')).toBe(before + 1);
    const [{ bounded }] = await sys.identity.dataSource.query<[{ bounded: boolean }]>(
      `SELECT bool_and(expires_at <= now() + interval '15 minutes') AS bounded FROM oidc_payloads WHERE kind = 'Interaction'`,
    );
    expect(bounded).toBe(true);
  });

  it('over-long parameters of a pushed or device request: invalid_request (JSON), nothing stored', async () => {
    const [par, device] = [await rows('PushedAuthorizationRequest'), await rows('DeviceCode')];
    const pushed = await fetch(`${issuer}/oidc/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${APP.clientId}:${SECRET}`).toString('base64')}` },
      body: authorizationUrl({ nonce: 'n'.repeat(2_000) }).searchParams.toString(),
    });
    expect({ status: pushed.status, error: ((await pushed.json()) as { error: string }).error }).toEqual({ status: 400, error: 'invalid_request' });
    const tv = await fetch(`${issuer}/oidc/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: TV.clientId, scope: 'openid', login_hint: 'h'.repeat(400) }).toString(),
    });
    expect({ status: tv.status, error: ((await tv.json()) as { error: string }).error }).toEqual({ status: 400, error: 'invalid_request' });
    expect([await rows('PushedAuthorizationRequest'), await rows('DeviceCode')]).toEqual([par, device]);
  });

  it('an expired sign-in: its page and its form answer a clear 400 page, not a 500', async () => {
    const start = await fetch(authorizationUrl(), { redirect: 'manual' });
    const page = new URL(start.headers.get('location')!, issuer);
    const cookie = start.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    expect((await fetch(page, { headers: { cookie } })).status).toBe(200);
    const uid = page.pathname.split('/').pop()!;
    await sys.identity.dataSource.query(`UPDATE oidc_payloads SET expires_at = now() - interval '1 second' WHERE kind = 'Interaction' AND id = $1`, [uid]);
    for (const r of [
      await fetch(page, { headers: { cookie } }),
      await fetch(`${page.href}/login`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=a%40example.com&password=x' }),
      await fetch(`${issuer}/oidc/auth/${uid}`, { headers: { cookie }, redirect: 'manual' }),
    ]) {
      const text = await r.text();
      expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({ status: 400, type: 'text/html; charset=utf-8' });
      expect(text).toMatch(/expired|start again/i);
    }
  });

  it('the device pages answer anonymous input with the hosted 400 page: no 500, no stack trace, nothing logged as an error', async () => {
    const printed = jest.spyOn(console, 'error');
    const errorsBefore = logLines.filter((l) => l.includes('"level":50')).length;
    try {
      for (const r of [
        await raw(`${issuer}/oidc/device`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'user_code=BCDF-GHJK&xsrf=x' }),
        await raw(`${issuer}/oidc/device`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: '_session=made-up; _session.sig=made-up' }, body: 'user_code=BCDF-GHJK&confirm=yes' }),
        await raw(`${issuer}/oidc/device/anything`),
        await raw(`${issuer}/oidc/device/${'x'.repeat(40)}?user_code=1`),
      ]) {
        expect({ status: r.status, type: r.headers['content-type'] }).toEqual({ status: 400, type: 'text/html; charset=utf-8' });
        expect(r.headers['content-security-policy']).toContain("default-src 'none'");
        expect(r.text).toContain('Open the device page again');
        expect(r.text).not.toMatch(/TypeError|\bat .*\.js:\d+|node_modules/);
      }
      // The device page itself still works.
      const page = await raw(`${issuer}/oidc/device`);
      expect({ status: page.status, form: page.text.includes('name="user_code"') }).toEqual({ status: 200, form: true });
      expect(printed).not.toHaveBeenCalled();
      expect(logLines.filter((l) => l.includes('"level":50')).length).toBe(errorsBefore);
    } finally {
      printed.mockRestore();
    }
  });
});
