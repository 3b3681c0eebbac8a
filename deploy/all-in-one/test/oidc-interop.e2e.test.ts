/**
 * What relying parties other than our own expect of the provider (issue #36 items 1 and 5), with
 * clients made through the clients API and openid-client as RP, through the gateway:
 * - ID tokens are RS256 by default (OIDC Discovery §3, Core §15.1) and verify against the JWKS
 *   (their kid names a key with `alg: RS256`); a client registered with EdDSA or ES256 gets those;
 *   signed userinfo in the client's algorithm; the JWKS lists every key with its alg and use;
 * - the metadata documents: RFC 8414 (the same issuer and endpoints as discovery) and the API's
 *   protected-resource metadata (RFC 9728), named by every 401 of the API.
 * The key ring's rotation of every algorithm is unit-tested on the real PostgreSQL with a time
 * the test controls (services/identity/src/infra/key-ring.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type * as openidClient from 'openid-client';
import { ADMIN, type TestSystem, http, startTestSystem, userHolding } from './harness';
import { freePort, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;
const REDIRECT = 'http://127.0.0.1:21999/callback';

describe('OpenID provider interoperability: token algorithms and metadata', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = Number(process.env.OIDC_INTEROP_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  /** A confidential code client (its settings as given), and an openid-client configuration that expects its algorithms. */
  async function registered(settings: Record<string, unknown> = {}): Promise<{ clientId: string; secret: string; config: Config; json: Record<string, unknown> }> {
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `RP ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token'], ...settings },
    });
    expect(r.status).toBe(201);
    const secret = r.json.clientSecret as string;
    const metadata = {
      client_secret: secret,
      ...(typeof settings.idTokenSignedResponseAlg === 'string' ? { id_token_signed_response_alg: settings.idTokenSignedResponseAlg } : {}),
      ...(typeof settings.userinfoSignedResponseAlg === 'string' ? { userinfo_signed_response_alg: settings.userinfoSignedResponseAlg } : {}),
    };
    const config = await oc.discovery(new URL(issuer), r.json.clientId as string, metadata, oc.ClientSecretBasic(secret), { execute: [oc.allowInsecureRequests] });
    return { clientId: r.json.clientId as string, secret, config, json: r.json };
  }

  /** Code + PKCE over the hosted pages, exchanged without `resource` (as a standard RP does). */
  async function signIn(config: Config, scope = 'openid email profile') {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const nonce = oc.randomNonce();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, prompt: 'consent' });
    const back = await signInOverHttp(url);
    return oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  }

  const jwks = () => createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
  const jwksKeys = async () => ((await (await fetch(`${issuer}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, string>> }).keys;

  it('[OIDCC-config] discovery offers RS256 first for ID tokens (and ES256, EdDSA) and for userinfo; the JWKS lists every key with its alg and use', async () => {
    const d = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(d.id_token_signing_alg_values_supported).toEqual(['RS256', 'EdDSA', 'ES256']);
    expect(d.userinfo_signing_alg_values_supported).toEqual(['RS256', 'EdDSA', 'ES256']);
    const keys = await jwksKeys();
    expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    for (const k of keys) {
      expect(k).toMatchObject({ kid: expect.any(String), use: 'sig', kty: { RS256: 'RSA', ES256: 'EC', EdDSA: 'OKP' }[k.alg!] });
      expect(k.d).toBeUndefined();
    }
  });

  it('[OIDCC-config oidcc-idtoken-rs256] a client registered with defaults: an RS256 ID token whose kid names the JWKS key with alg RS256, verified against it', async () => {
    const c = await registered();
    expect(c.json).toMatchObject({ idTokenSignedResponseAlg: 'RS256', userinfoSignedResponseAlg: null, resourceServer: false });
    const t = await signIn(c.config);
    const header = decodeProtectedHeader(t.id_token!);
    expect(header.alg).toBe('RS256');
    expect((await jwksKeys()).find((k) => k.kid === header.kid)).toMatchObject({ alg: 'RS256', kty: 'RSA', use: 'sig' });
    const { payload } = await jwtVerify(t.id_token!, jwks(), { algorithms: ['RS256'], issuer, audience: c.clientId });
    expect(payload).toMatchObject({ email: ADMIN.email, sub: t.claims()!.sub });
    // Userinfo stays plain JSON unless the client asks for a signed answer.
    expect(await oc.fetchUserInfo(c.config, t.access_token, payload.sub!)).toMatchObject({ sub: payload.sub, email: ADMIN.email });
    // [OIDCC-config oidcc-userinfo-rs256] asked for RS256: userinfo answers a JWT signed so (the same access token).
    expect((await http(issuer, 'PUT', `/api/v1/clients/${c.clientId}`, { token: admin, body: { userinfoSignedResponseAlg: 'RS256' } })).json.userinfoSignedResponseAlg).toBe('RS256');
    const info = await fetch(`${issuer}/oidc/me`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(info.headers.get('content-type')).toMatch(/^application\/jwt/);
    const signed = await info.text();
    expect(decodeProtectedHeader(signed).alg).toBe('RS256');
    expect((await jwtVerify(signed, jwks(), { algorithms: ['RS256'], issuer, audience: c.clientId })).payload).toMatchObject({ sub: payload.sub, email: ADMIN.email });
  });

  it('a client registered with EdDSA ID tokens and ES256 userinfo gets exactly those, each verified against the JWKS', async () => {
    const c = await registered({ idTokenSignedResponseAlg: 'EdDSA', userinfoSignedResponseAlg: 'ES256' });
    expect(c.json).toMatchObject({ idTokenSignedResponseAlg: 'EdDSA', userinfoSignedResponseAlg: 'ES256' });
    const t = await signIn(c.config);
    expect(decodeProtectedHeader(t.id_token!).alg).toBe('EdDSA');
    const { payload } = await jwtVerify(t.id_token!, jwks(), { algorithms: ['EdDSA'], issuer, audience: c.clientId });
    const info = await fetch(`${issuer}/oidc/me`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(info.status).toBe(200);
    expect(info.headers.get('content-type')).toMatch(/^application\/jwt/);
    const signed = await info.text();
    expect(decodeProtectedHeader(signed).alg).toBe('ES256');
    expect((await jwtVerify(signed, jwks(), { algorithms: ['ES256'], issuer, audience: c.clientId })).payload).toMatchObject({ sub: payload.sub, email: ADMIN.email });
    // Changed back to RS256 (and plain userinfo): the next sign-in's ID token follows.
    const put = await http(issuer, 'PUT', `/api/v1/clients/${c.clientId}`, { token: admin, body: { idTokenSignedResponseAlg: 'RS256', userinfoSignedResponseAlg: null } });
    expect(put.json).toMatchObject({ idTokenSignedResponseAlg: 'RS256', userinfoSignedResponseAlg: null });
    const again = await signIn(await oc.discovery(new URL(issuer), c.clientId, { client_secret: c.secret }, oc.ClientSecretBasic(c.secret), { execute: [oc.allowInsecureRequests] }));
    expect(decodeProtectedHeader(again.id_token!).alg).toBe('RS256');
  });

  it('algorithms outside the offer are a 400 naming the field; the resource-server flag is for an Administrator', async () => {
    const bad = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: 'Bad alg', type: 'confidential', redirectUris: [REDIRECT], grantTypes: ['authorization_code'], idTokenSignedResponseAlg: 'HS256' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json.errors)).toContain('idTokenSignedResponseAlg');
    const manager = await userHolding(issuer, admin, ['clients.manage']);
    const body = { name: `Gateway ${randomUUID().slice(0, 8)}`, type: 'confidential', grantTypes: ['client_credentials'], resourceServer: true };
    expect((await http(issuer, 'POST', '/api/v1/clients', { token: manager.token, body })).status).toBe(403);
    const made = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body });
    expect(made.status).toBe(201);
    expect(made.json.resourceServer).toBe(true);
    // Acting on a resource server (its secret is the power to introspect every token) is the Administrator's too.
    expect((await http(issuer, 'POST', `/api/v1/clients/${made.json.clientId}/secret`, { token: manager.token })).status).toBe(403);
    expect((await http(issuer, 'PUT', `/api/v1/clients/${made.json.clientId}`, { token: manager.token, body: { name: 'Renamed' } })).status).toBe(403);
    expect((await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: { ...body, type: 'public', grantTypes: ['authorization_code'], redirectUris: [REDIRECT] } })).status).toBe(400);
  });

  it('RFC 8414: /.well-known/oauth-authorization-server has the issuer and the endpoints of discovery', async () => {
    const oidc = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const oauth = (await res.json()) as Record<string, unknown>;
    // RFC 8414 §2 required members, and §3.3: the issuer is the one the document was asked of.
    expect(oauth.issuer).toBe(issuer);
    expect(oauth.response_types_supported).toEqual(['code']);
    for (const m of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'introspection_endpoint', 'revocation_endpoint', 'pushed_authorization_request_endpoint', 'device_authorization_endpoint']) {
      expect(oauth[m]).toBe(oidc[m]);
      expect(String(oauth[m])).toMatch(new RegExp(`^${issuer}/`));
    }
    expect(oauth.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('RFC 9728: the API’s protected-resource metadata, named by every 401 of the API', async () => {
    const res = await fetch(`${issuer}/api/v1/users`);
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(url).toBe(`${issuer}/.well-known/oauth-protected-resource/api`);
    // A token that does not verify keeps its error attribute beside it.
    const forged = await fetch(`${issuer}/api/v1/users`, { headers: { authorization: 'Bearer not.a.token' } });
    expect(forged.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${url}"`);
    const doc = (await (await fetch(url!)).json()) as Record<string, unknown>;
    // §3.3: `resource` is the identifier the URL was made of; §2 members.
    expect(doc).toMatchObject({ resource: `${issuer}/api`, authorization_servers: [issuer], bearer_methods_supported: ['header'], dpop_bound_access_tokens_required: false });
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['users.manage', 'roles.manage', 'clients.manage', 'audit.read']));
    expect(doc.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA', 'RS256']));
    // The same document at the host's root; the authorization server it names answers RFC 8414.
    expect(await (await fetch(`${issuer}/.well-known/oauth-protected-resource`)).json()).toEqual(doc);
    expect(((await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as { issuer: string }).issuer).toBe(issuer);
  });
});
