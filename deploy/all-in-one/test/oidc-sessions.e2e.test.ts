/**
 * The OpenID provider's sessions and requests end to end (openid-client as RP through the gateway;
 * the hosted pages walked over HTTP, support/oidc-rp.ts): refused authorization requests,
 * prompt=none and prompt=login on a live session, RP-initiated logout (of the provider, or of one
 * client), userinfo, PAR. The pages in Chromium: oidc-pages.e2e.
 */
import { eventually } from '@iam/platform/testing';
import { ADMIN } from './harness';
import { CookieJar, oauthError, signInOverHttp } from './support/oidc-rp';
import { oidcSuite } from './support/oidc-suite';

describe('OpenID provider sessions and requests (openid-client as RP)', () => {
  const s = oidcSuite();

  it('no PKCE and `plain` are invalid_request; a redirect URI not registered exactly is refused on a page, never redirected to', async () => {
    const config = await s.discover(s.c.web);
    const noPkce = new URL((await s.authorization(config)).url);
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    let r = await fetch(noPkce, { redirect: 'manual' });
    let back = new URL(r.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('iss')).toBe(s.issuer);
    const plain = new URL((await s.authorization(config)).url);
    plain.searchParams.set('code_challenge_method', 'plain');
    r = await fetch(plain, { redirect: 'manual' });
    back = new URL(r.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    for (const wrong of [`${s.rp.callback}/`, `${s.rp.callback}?x=1`, 'http://evil.example/callback']) {
      const u = new URL((await s.authorization(config)).url);
      u.searchParams.set('redirect_uri', wrong);
      r = await fetch(u, { redirect: 'manual' });
      expect(r.status).toBe(400);
      expect(r.headers.get('location')).toBeNull();
      expect(await r.text()).toContain('redirect_uri');
    }
  });

  it('[OIDCC-basic prompt=none, RP-initiated logout] a signed-in agent gets a code with prompt=none; after logout at the provider, login_required', async () => {
    const config = await s.discover(s.c.web);
    const jar = new CookieJar();
    const a = await s.authorization(config, { scope: 'openid email offline_access users.manage' });
    const end = await signInOverHttp(a.url, { jar });
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    // An API token of this session (a JWT the gateway checks itself), taken before the logout.
    const api = await s.oc.refreshTokenGrant(config, t.refresh_token!, { resource: `${s.issuer}/api` });
    const apiStatus = async () => (await fetch(`${s.issuer}/api/v1/users`, { headers: { authorization: `Bearer ${api.access_token}` } })).status;
    expect(await apiStatus()).toBe(200);
    // oidcc-prompt-none-logged-in: the session answers without a page.
    const silent = await s.authorization(config, { prompt: 'none', scope: 'openid email' });
    const back = await signInOverHttp(silent.url, { jar });
    expect(back.url.searchParams.get('code')).toBeTruthy();
    expect(back.url.searchParams.get('iss')).toBe(s.issuer);
    // oidcc-prompt-login: prompt=login shows the sign-in page again although the session is alive.
    const again = await signInOverHttp((await s.authorization(config, { prompt: 'login', scope: 'openid' })).url, { jar, signIn: false });
    expect(again.status).toBe(200);
    expect(again.body).toContain('<h1>Sign in</h1>');

    // RP-initiated logout: the provider asks, the user confirms, the agent goes to the registered post-logout URI.
    const endUrl = s.oc.buildEndSessionUrl(config, { id_token_hint: t.id_token!, post_logout_redirect_uri: s.rp.signedOut, state: 'bye' });
    const ask = await jar.fetch(endUrl);
    expect(ask.status).toBe(200);
    const page = await ask.text();
    expect(page).toContain('Sign out');
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"|<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(page);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1];
    expect(xsrf).toBeDefined();
    const confirmed = await jar.fetch(new URL((action?.[1] ?? action?.[2])!, s.issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    expect(confirmed.status).toBe(303);
    // Denylisted before the redirect left (the gateways learn it from the event within a second).
    const { jti } = JSON.parse(Buffer.from(api.access_token.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string };
    expect(await s.system.identity.dataSource.query('SELECT 1 FROM revoked_access_tokens WHERE jti = $1', [jti])).toHaveLength(1);
    const signedOut = new URL(confirmed.headers.get('location')!);
    expect(`${signedOut.origin}${signedOut.pathname}`).toBe(s.rp.signedOut);
    expect(signedOut.searchParams.get('state')).toBe('bye');
    // oidcc-prompt-none-not-logged-in: the session is gone.
    const after = await signInOverHttp((await s.authorization(config, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(after.url.searchParams.get('error')).toBe('login_required');
    expect(after.url.searchParams.get('code')).toBeNull();
    // The session's access tokens stop at the gateway (the session ended with the logout, as from
    // the sessions list); the refresh token of the grant lives on (logout ends the provider session,
    // not offline grants).
    await eventually(async () => (await apiStatus()) === 401, 5_000, 100);
    await expect(s.oc.refreshTokenGrant(config, api.refresh_token!)).resolves.toBeDefined();
  });

  it('[RP-initiated logout, one client] "Stay signed in": the API tokens the session issued to that client stop; the session and the other client\'s go on', async () => {
    const jar = new CookieJar();
    const resource = `${s.issuer}/api`;
    const web = await s.discover(s.c.web);
    const other = await s.discover(s.c.other);
    const a = await s.authorization(web, { scope: 'openid email offline_access users.manage' });
    const t = await s.oc.authorizationCodeGrant(web, (await signInOverHttp(a.url, { jar })).url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const b = await s.authorization(other, { scope: 'openid email offline_access users.manage' });
    const u = await s.oc.authorizationCodeGrant(other, (await signInOverHttp(b.url, { jar })).url, { pkceCodeVerifier: b.verifier, expectedState: b.state });
    const webApi = await s.oc.refreshTokenGrant(web, t.refresh_token!, { resource });
    const otherApi = await s.oc.refreshTokenGrant(other, u.refresh_token!, { resource });
    const status = async (token: string) => (await fetch(`${s.issuer}/api/v1/users`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect([await status(webApi.access_token), await status(otherApi.access_token)]).toEqual([200, 200]);

    // The web client asks to sign out; the user stays signed in to the provider.
    const ask = await jar.fetch(s.oc.buildEndSessionUrl(web, { id_token_hint: t.id_token!, post_logout_redirect_uri: s.rp.signedOut }));
    const page = await ask.text();
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"|<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(page);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1];
    const stayed = await jar.fetch(new URL((action?.[1] ?? action?.[2])!, s.issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf! }).toString(),
    });
    expect(stayed.status).toBe(303);
    await eventually(async () => (await status(webApi.access_token)) === 401, 5_000, 100);
    // The other client's token and the provider session are untouched.
    expect(await status(otherApi.access_token)).toBe(200);
    const silent = await signInOverHttp((await s.authorization(other, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(silent.url.searchParams.get('code')).toBeTruthy();
  });

  it('[userinfo] GET with the bearer header, POST with the header, and a revoked access token refused', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config, { scope: 'openid email profile' });
    const end = await signInOverHttp(a.url);
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const sub = t.claims()!.sub;
    expect(await s.oc.fetchUserInfo(config, t.access_token, sub)).toEqual(expect.objectContaining({ sub, email: ADMIN.email, given_name: expect.any(String) }));
    // oidcc-userinfo-post-header
    const post = await fetch(`${s.issuer}/oidc/me`, { method: 'POST', headers: { authorization: `Bearer ${t.access_token}` } });
    expect(post.status).toBe(200);
    expect(((await post.json()) as { sub: string }).sub).toBe(sub);
    // The userinfo token is opaque: revocation ends it at once.
    await s.oc.tokenRevocation(config, t.access_token);
    expect(await oauthError(s.oc.fetchUserInfo(config, t.access_token, sub))).toBe('invalid_token');
  });

  it('PAR (RFC 9126): a client that must push is refused a plain request; the pushed request_uri signs in once', async () => {
    const config = await s.discover(s.c.par);
    const plain = await s.authorization(config);
    const r = await fetch(plain.url, { redirect: 'manual' });
    const refusedAt = r.headers.get('location') ? new URL(r.headers.get('location')!).searchParams.get('error') : String(r.status);
    expect(['invalid_request', '400']).toContain(refusedAt);
    const verifier = s.oc.randomPKCECodeVerifier();
    const state = s.oc.randomState();
    const pushed = await s.oc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: s.rp.callback,
      scope: 'openid email',
      code_challenge: await s.oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
    });
    expect([...pushed.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(pushed.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const end = await signInOverHttp(pushed);
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: verifier, expectedState: state });
    expect(t.claims()!.email).toBe(ADMIN.email);
    // The request_uri is single use.
    const reused = await fetch(pushed, { redirect: 'manual' });
    const reusedError = reused.headers.get('location') ? new URL(reused.headers.get('location')!).searchParams.get('error') : String(reused.status);
    expect(reusedError).not.toBeNull();
    expect(reused.headers.get('location') ?? '').not.toContain('code=');
  });
});
