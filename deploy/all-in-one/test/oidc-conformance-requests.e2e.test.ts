/**
 * The Basic OP plan's (oidcc-basic-certification-test-plan) modules about authorization request
 * parameters, ported (the rest: oidc-conformance.e2e, oidc-tokens.e2e, oidc-sessions.e2e,
 * oidc-pages.e2e; services/identity/README.md maps every module). Each test is named after its
 * module(s). A port of the suite's checks, not a certification; RS256 ID tokens.
 */
import { ADMIN } from './harness';
import { CookieJar, signInOverHttp } from './support/oidc-rp';
import { type Config, oidcSuite } from './support/oidc-suite';

describe('OpenID Foundation Basic OP plan: request parameters (ported)', () => {
  const s = oidcSuite();

  async function codeFlow(config: Config, extra: Record<string, string> = {}, jar = new CookieJar()) {
    const a = await s.authorization(config, extra);
    const end = await signInOverHttp(a.url, { jar });
    expect(end.url.searchParams.get('error')).toBeNull();
    const tokens = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    return { tokens, claims: tokens.claims()!, jar };
  }

  /** Where an authorization request ends without a browser: the redirect's error, or the page's status. */
  async function refusal(url: URL): Promise<{ error: string | null; status: number; code: string | null }> {
    const r = await fetch(url, { redirect: 'manual' });
    const location = r.headers.get('location');
    const back = location ? new URL(location, s.issuer) : null;
    if (back && back.origin === s.rp.origin) return { error: back.searchParams.get('error'), status: r.status, code: back.searchParams.get('code') };
    return { error: null, status: r.status, code: null };
  }

  it('[oidcc-response-type-missing] no response_type: an error (at the redirect URI, or a page), never a code', async () => {
    const url = (await s.authorization(await s.discover(s.c.web))).url;
    url.searchParams.delete('response_type');
    const r = await refusal(url);
    expect(r.code).toBeNull();
    if (r.error !== null) expect(['invalid_request', 'unsupported_response_type']).toContain(r.error);
    else expect(r.status).toBe(400);
  });

  it('[oidcc-ensure-request-with-unknown-parameter-succeeds] [oidcc-display-page] [oidcc-display-popup] [oidcc-ui-locales] [oidcc-claims-locales] [oidcc-login-hint] parameters it does not act on are accepted', async () => {
    const config = await s.discover(s.c.web);
    const asked: Array<Record<string, string>> = [{ extra_param: 'foobar' }, { display: 'page' }, { display: 'popup' }, { ui_locales: 'se' }, { claims_locales: 'se' }, { login_hint: ADMIN.email }];
    for (const extra of asked) {
      const { claims } = await codeFlow(config, extra);
      expect({ extra, email: claims.email }).toEqual({ extra, email: ADMIN.email });
    }
  });

  it('[oidcc-ensure-request-with-acr-values-succeeds] acr_values with an offered value: a code, and the ID token names the acr', async () => {
    const config = await s.discover(s.c.web);
    const discovered = (await (await fetch(`${s.issuer}/.well-known/openid-configuration`)).json()) as { acr_values_supported: string[] };
    expect(discovered.acr_values_supported).toEqual(expect.arrayContaining(['urn:iam:acr:pwd', 'urn:iam:acr:mfa']));
    const { claims } = await codeFlow(config, { acr_values: 'urn:iam:acr:pwd' });
    expect(claims.acr).toBe('urn:iam:acr:pwd');
  });

  it('[oidcc-claims-essential] the claims parameter (name essential in userinfo): the request succeeds (the parameter is not supported, so ignored), the scope\'s claims are there', async () => {
    const config = await s.discover(s.c.web);
    const { tokens, claims } = await codeFlow(config, { scope: 'openid profile', claims: JSON.stringify({ userinfo: { name: { essential: true } } }) });
    expect(await s.oc.fetchUserInfo(config, tokens.access_token, claims.sub)).toEqual(expect.objectContaining({ sub: claims.sub, given_name: expect.any(String) }));
  });

  it('[oidcc-max-age-1] max_age=1 after 2 s: the sign-in page again, and a later auth_time; [oidcc-max-age-10000] max_age=10000: no page, the same auth_time', async () => {
    const config = await s.discover(s.c.web);
    const first = await codeFlow(config, { scope: 'openid' });
    const firstAuth = Number(first.claims.auth_time);
    // The same agent: max_age=10000 answers without a page.
    const long = await s.authorization(config, { scope: 'openid', prompt: '', max_age: '10000' });
    long.url.searchParams.delete('prompt');
    const silent = await signInOverHttp(long.url, { jar: first.jar, signIn: false });
    expect(silent.url.searchParams.get('code')).toBeTruthy();
    const kept = await s.oc.authorizationCodeGrant(config, silent.url, { pkceCodeVerifier: long.verifier, expectedState: long.state, maxAge: 10000 });
    expect(kept.claims()!.auth_time).toBe(firstAuth);
    // auth_time has whole seconds: wait until the sign-in is older than max_age=1.
    await new Promise((r) => setTimeout(r, 2_100));
    const short = await s.authorization(config, { scope: 'openid', max_age: '1' });
    short.url.searchParams.delete('prompt');
    const page = await signInOverHttp(short.url, { jar: first.jar, signIn: false });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Sign in</h1>');
    const again = await signInOverHttp(short.url, { jar: first.jar });
    const fresh = await s.oc.authorizationCodeGrant(config, again.url, { pkceCodeVerifier: short.verifier, expectedState: short.state, maxAge: 1 });
    expect(Number(fresh.claims()!.auth_time)).toBeGreaterThan(firstAuth);
  });

  it('[oidcc-id-token-hint] prompt=none with the ID token of the session as id_token_hint: a code for the same subject', async () => {
    const config = await s.discover(s.c.web);
    const first = await codeFlow(config, { scope: 'openid' });
    const hinted = await s.authorization(config, { scope: 'openid', prompt: 'none', id_token_hint: first.tokens.id_token! });
    const back = await signInOverHttp(hinted.url, { jar: first.jar, signIn: false });
    expect(back.url.searchParams.get('error')).toBeNull();
    const t = await s.oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: hinted.verifier, expectedState: hinted.state });
    expect(t.claims()!.sub).toBe(first.claims.sub);
  });

  it('[oidcc-codereuse-30seconds] a code presented again 30 s after its exchange: invalid_grant, and the access token of the first exchange revoked', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config, { scope: 'openid email' });
    const end = await signInOverHttp(a.url);
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    expect((await fetch(`${s.issuer}/oidc/me`, { headers: { authorization: `Bearer ${t.access_token}` } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 30_500));
    await expect(s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await fetch(`${s.issuer}/oidc/me`, { headers: { authorization: `Bearer ${t.access_token}` } })).status).toBe(401);
  }, 60_000);

  it('[oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported] [oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported] [oidcc-ensure-request-object-with-redirect-uri] request_uri by reference and request objects: not offered, and refused as such', async () => {
    const d = (await (await fetch(`${s.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(d.request_parameter_supported ?? false).toBe(false);
    expect(d.request_uri_parameter_supported ?? true).toBe(false);
    const config = await s.discover(s.c.web);
    const byRef = (await s.authorization(config)).url;
    byRef.searchParams.set('request_uri', `${s.rp.origin}/request.jwt`);
    const refusedRef = await refusal(byRef);
    expect(refusedRef.code).toBeNull();
    if (refusedRef.error !== null) expect(['request_uri_not_supported', 'invalid_request', 'invalid_request_uri']).toContain(refusedRef.error);
    // An unsigned request object (alg none) with the same parameters.
    const plain = (await s.authorization(config)).url;
    const object = Object.fromEntries(plain.searchParams);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ ...object, iss: s.c.web.client.clientId, aud: s.issuer })).toString('base64url')}.`;
    plain.searchParams.set('request', unsigned);
    const refusedObject = await refusal(plain);
    expect(refusedObject.code).toBeNull();
    if (refusedObject.error !== null) expect(['request_not_supported', 'invalid_request', 'invalid_request_object']).toContain(refusedObject.error);
    // Nothing fetched the request_uri.
    expect(s.rp.requests.some((u) => u.pathname === '/request.jwt')).toBe(false);
  });

  it('[oidcc-ensure-post-request-succeeds] the authorization endpoint by POST: not offered (the provider takes GET only; see the README), refused without a code', async () => {
    const a = await s.authorization(await s.discover(s.c.web));
    const form = new URLSearchParams(a.url.searchParams);
    const endpoint = `${a.url.origin}${a.url.pathname}`;
    const r = await fetch(endpoint, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.headers.get('location') ?? '').not.toContain('code=');
  });
});
