/**
 * Organizations at the OpenID provider (issue #41), with openid-client as a relying party on
 * another origin: the organization-token grant (a refresh token exchanged for one organization's
 * token: `org`, its audience, the member's permissions ∩ the scope asked ∩ the client's ceiling),
 * one token per organization, a removed member's next exchange and refresh refused, the same
 * error for a non-member and an unknown organization; authorization requests naming an
 * organization (`organization:<slug>`, `organization_id`): the access token carries it, and a
 * non-member is refused before any session or code exists; `organizations` in the ID token only
 * when asked; discovery lists the scopes, the claim and the grant.
 */
import { randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { type RpServer, startRpServer } from './support/rp-server';
import { CookieJar, freePort, payloadOf, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(180_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;
const GRANT = 'urn:iam:grant-type:organization_token';

describe('organizations at the OpenID provider (openid-client, another origin)', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let api: string;
  let admin: string;
  let rp: RpServer;
  let config: Config;
  let role: string;
  const call = (method: string, path: string, body?: unknown, token = admin) => http(issuer, method, path, { token, ...(body !== undefined ? { body } : {}) });

  async function org(): Promise<{ id: string; slug: string }> {
    const slug = `oo-${randomUUID().slice(0, 8)}`;
    const r = await call('POST', '/api/v1/organizations', { name: 'Org', slug });
    expect(r.status).toBe(201);
    return { id: r.json.id, slug };
  }
  async function user(): Promise<{ id: string; email: string; password: string }> {
    const email = uniqueEmail('oo');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { firstName: 'Org', lastName: 'Member', email, password });
    expect(r.status).toBe(201);
    return { id: r.json.id, email, password };
  }
  const join = async (o: { id: string }, u: { id: string }, roles: string[]) => expect((await call('POST', `/api/v1/organizations/${o.id}/members`, { userId: u.id, roles })).status).toBe(201);

  /** Code + PKCE over the hosted pages (consent allowed); the callback URL the app's server got. */
  async function authorize(scope: string, u: { email: string; password: string }, extra: Record<string, string> = {}, jar = new CookieJar()) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt: 'consent', ...extra });
    const back = await signInOverHttp(url, { email: u.email, password: u.password, jar, rpOrigin: new URL(rp.callback).origin });
    return { back: back.url, tokens: () => oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: state }, { resource: api }) };
  }
  /** The grant's answer, or its OAuth error and description. */
  async function exchange(refreshToken: string, organizationId: string, scope?: string): Promise<{ token?: string; error?: string; description?: string }> {
    try {
      const t = await oc.genericGrantRequest(config, GRANT, { refresh_token: refreshToken, organization_id: organizationId, ...(scope ? { scope } : {}) });
      return { token: t.access_token };
    } catch (err) {
      const e = err as { error?: string; error_description?: string };
      return { error: e.error, description: e.error_description };
    }
  }
  const statusAt = async (path: string, token: string) => (await fetch(`${issuer}${path}`, { headers: { authorization: `Bearer ${token}` } })).status;

  beforeAll(async () => {
    oc = await import('openid-client');
    rp = await startRpServer();
    const port = Number(process.env.OIDC_ORGS_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    api = `${issuer}/api`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    // A third-party app whose ceiling is users.manage and audit.read.
    const c = await call('POST', '/api/v1/clients', {
      name: `B2B app ${randomUUID().slice(0, 8)}`,
      type: 'confidential',
      redirectUris: [rp.callback],
      grantTypes: ['authorization_code', 'refresh_token'],
      apiPermissions: ['users.manage', 'audit.read'],
    });
    expect(c.status).toBe(201);
    config = await oc.discovery(new URL(issuer), c.json.clientId, { client_secret: c.json.clientSecret }, oc.ClientSecretBasic(c.json.clientSecret), { execute: [oc.allowInsecureRequests] });
    const r = await call('POST', '/api/v1/organization-roles', { name: `billing-${randomUUID().slice(0, 6)}`, permissions: ['users.manage', 'audit.read', 'roles.manage'] });
    expect(r.status).toBe(201);
    role = r.json.name;
  });
  afterAll(async () => {
    await sys?.stop();
    await rp?.close();
  });

  it('discovery lists the organization scopes, the claim and the grant', () => {
    const m = config.serverMetadata();
    expect(m.scopes_supported).toEqual(expect.arrayContaining(['organization', 'organizations']));
    expect(m.claims_supported).toEqual(expect.arrayContaining(['organizations']));
    expect(m.grant_types_supported).toEqual(expect.arrayContaining([GRANT]));
  });

  it('the grant: one token per organization, the scope intersection, removal at the next exchange, the same error for non-member and unknown', async () => {
    const [a, b, c] = [await org(), await org(), await org()];
    const u = await user();
    await join(a, u, [role, 'org.admin']);
    await join(b, u, []);
    await join(a, await user(), ['org.admin']);
    const t = await (await authorize('openid offline_access organization users.manage audit.read', u)).tokens();
    const rt = t.refresh_token!;

    const ta = await exchange(rt, a.id);
    const claims = payloadOf(ta.token!);
    // roles.manage is the member's in a, but outside the app's ceiling: never in the token.
    expect(claims).toMatchObject({ sub: u.id, org: { id: a.id, slug: a.slug }, roles: [], permissions: ['audit.read', 'users.manage'] });
    expect(claims.aud).toEqual(expect.arrayContaining(['iam-api', `urn:iam:organization:${a.id}`]));
    // Narrowed by the scope, never widened; by slug as by id.
    expect(payloadOf((await exchange(rt, a.slug, 'audit.read products.manage')).token!).permissions).toEqual(['audit.read']);
    // b: its own token, without a's permissions.
    expect(payloadOf((await exchange(rt, b.id)).token!)).toMatchObject({ org: { id: b.id }, permissions: [] });
    // Non-member and unknown: the same answer.
    const notMember = await exchange(rt, c.id);
    const unknown = await exchange(rt, randomUUID());
    expect(notMember.error).toBe('access_denied');
    expect(unknown).toEqual(notMember);
    expect(await exchange(rt, `no-such-${randomUUID().slice(0, 6)}`)).toEqual(notMember);

    // At the gateway: its organization's routes only.
    expect(await statusAt(`/api/v1/organizations/${a.id}/members`, ta.token!)).toBe(200);
    expect(await statusAt(`/api/v1/organizations/${b.id}/members`, ta.token!)).toBe(404);
    expect(await statusAt('/api/v1/users', ta.token!)).toBe(403);

    // Removed from a: the next exchange is refused as a non-member's; the refresh token lives on.
    expect((await call('DELETE', `/api/v1/organizations/${a.id}/members/${u.id}`)).status).toBe(204);
    expect(await exchange(rt, a.id)).toEqual(notMember);
    expect((await exchange(rt, b.id)).token).toEqual(expect.any(String));
    expect((await oc.refreshTokenGrant(config, rt, { resource: api })).access_token).toEqual(expect.any(String));
  });

  it('a refresh token granted no organization scope is not exchanged', async () => {
    const a = await org();
    const u = await user();
    await join(a, u, [role]);
    const t = await (await authorize('openid offline_access users.manage', u)).tokens();
    expect((await exchange(t.refresh_token!, a.id)).error).toBe('insufficient_scope');
  });

  it('a request with a DPoP proof is refused: this grant would answer with a bearer token', async () => {
    const a = await org();
    const u = await user();
    await join(a, u, [role]);
    const t = await (await authorize('openid offline_access organization', u)).tokens();
    const DPoP = oc.getDPoPHandle(config, await oc.randomDPoPKeyPair());
    let error: string | undefined;
    try {
      await oc.genericGrantRequest(config, GRANT, { refresh_token: t.refresh_token!, organization_id: a.id }, { DPoP });
    } catch (err) {
      error = (err as { error?: string }).error;
    }
    expect(error).toBe('invalid_request');
    expect((await exchange(t.refresh_token!, a.id)).token).toEqual(expect.any(String));
  });

  it('an authorization naming an organization: its tokens carry it (scope or organization_id), organizations in the ID token only when asked, a removed member’s refresh refused', async () => {
    const [a, b] = [await org(), await org()];
    const u = await user();
    await join(a, u, [role]);
    await join(b, u, []);
    const t = await (await authorize(`openid offline_access organization:${a.slug} users.manage`, u)).tokens();
    expect(payloadOf(t.access_token)).toMatchObject({ org: { id: a.id, slug: a.slug }, roles: [], permissions: ['users.manage'] });
    expect(payloadOf(t.access_token).aud).toEqual(expect.arrayContaining([`urn:iam:organization:${a.id}`]));
    expect(payloadOf(t.id_token!).organizations).toBeUndefined();
    expect(await statusAt(`/api/v1/organizations/${a.id}/members`, t.access_token)).toBe(403); // a member without org.admin
    expect(await statusAt(`/api/v1/organizations/${b.id}/members`, t.access_token)).toBe(404);

    const byId = await (await authorize('openid offline_access organization organizations audit.read', u, { organization_id: a.id })).tokens();
    expect(payloadOf(byId.access_token)).toMatchObject({ org: { id: a.id, slug: a.slug }, permissions: ['audit.read'] });
    expect((payloadOf(byId.id_token!).organizations as string[]).sort()).toEqual([a.id, b.id].sort());

    expect((await call('DELETE', `/api/v1/organizations/${a.id}/members/${u.id}`)).status).toBe(204);
    let error: string | undefined;
    try {
      await oc.refreshTokenGrant(config, t.refresh_token!, { resource: api });
    } catch (err) {
      error = (err as { error?: string }).error;
    }
    expect(error).toBe('invalid_grant');
  });

  it('a non-member (or an unknown organization) is refused before any session or code: signing in, and with a session already open', async () => {
    const [a, c] = [await org(), await org()];
    const u = await user();
    await join(a, u, []);
    const count = async () => {
      const [sessions] = await sys.identity.dataSource.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [u.id]);
      const [codes] = await sys.identity.dataSource.query(`SELECT count(*)::int AS n FROM oidc_payloads WHERE account_id = $1 AND kind IN ('AuthorizationCode', 'Session', 'Grant')`, [u.id]);
      return { sessions: sessions.n as number, codes: codes.n as number };
    };
    const refusals: Array<string | null> = [];
    for (const scope of [`organization:${c.slug}`, `organization:no-such-${randomUUID().slice(0, 6)}`]) {
      const r = await authorize(`openid ${scope}`, u);
      expect(r.back.searchParams.get('code')).toBeNull();
      expect(r.back.searchParams.get('error')).toBe('access_denied');
      refusals.push(r.back.searchParams.get('error_description'));
    }
    const byId = await authorize('openid organization', u, { organization_id: randomUUID() });
    refusals.push(byId.back.searchParams.get('error_description'));
    expect(new Set(refusals).size).toBe(1);
    expect(await count()).toEqual({ sessions: 0, codes: 0 });

    // Signed in for a (a session open), then asking for c with it: refused, no code.
    const jar = new CookieJar();
    expect((await authorize(`openid organization:${a.slug}`, u, {}, jar)).back.searchParams.get('code')).toEqual(expect.any(String));
    const before = await count();
    const again = await authorize(`openid organization:${c.slug}`, u, { prompt: 'none' }, jar);
    expect(again.back.searchParams.get('code')).toBeNull();
    expect(again.back.searchParams.get('error')).toBe('access_denied');
    expect(again.back.searchParams.get('error_description')).toBe(refusals[0]);
    expect((await count()).codes).toBe(before.codes);
  });

  it('two organizations in one request, or an organization_id that names none: invalid_request', async () => {
    const u = await user();
    const two = await authorize('openid organization:one-org organization:two-org', u);
    const bad = await authorize('openid organization', u, { organization_id: 'Not An Org!' });
    expect([two.back.searchParams.get('error'), bad.back.searchParams.get('error')]).toEqual(['invalid_request', 'invalid_request']);
  });
});
