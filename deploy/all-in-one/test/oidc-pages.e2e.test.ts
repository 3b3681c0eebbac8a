/**
 * The provider's hosted pages as an app's user goes through them: Chromium with the pages' CSP
 * enforced, the app on another origin (its own server, support/rp-server.ts), openid-client as RP.
 * Sign-in and consent (accessible, strict headers), the way back after each form post
 * (form-action names the origin of this request's redirect URI and nothing else), a consent
 * denied (the error shown to the app), the logout confirmation and the device flow.
 */
import { createServer } from 'node:http';
import { eventually } from '@iam/platform/testing';
import { ADMIN } from './harness';
import { type AxeViolation, axe, cspContext } from './support/browser';
import { browserTest, oidcSuite } from './support/oidc-suite';

const browserIt = browserTest(__filename);

describe('OpenID provider hosted pages (Chromium, CSP enforced, the app on another origin)', () => {
  const s = oidcSuite();

  browserIt('[OIDCC-basic] code + PKCE: sign-in and consent pages (accessible, strict headers), back at the app, ID token validated, userinfo, an API token the gateway accepts', async () => {
    const { oc, issuer, c } = s;
    const config = await s.discover(c.web);
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const nonce = oc.randomNonce();
    const authUrl = oc.buildAuthorizationUrl(config, {
      redirect_uri: s.rp.callback,
      scope: 'openid profile email offline_access users.manage',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      prompt: 'consent',
    });
    const seen: Record<string, AxeViolation[]> = {};
    const csp: Record<string, string> = {};
    const callback = await s.signInInBrowser(authUrl, {
      consent: true,
      check: async (page, step, headers) => {
        seen[step] = await axe(page);
        csp[step] = headers['content-security-policy'] ?? '';
        expect(headers['x-frame-options']).toBe('DENY');
        expect(headers['referrer-policy']).toBe('no-referrer');
      },
    });
    expect(seen).toEqual({ 'sign-in': [], consent: [] });
    // Strict but for the way back: forms post to the provider, and its redirects may go on to the
    // origin of this request's (registered) redirect URI, nowhere else.
    for (const policy of Object.values(csp)) {
      const directives = Object.fromEntries(policy.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v.join(' ')]));
      expect(directives).toEqual(expect.objectContaining({ 'default-src': "'none'", 'frame-ancestors': "'none'", 'base-uri': "'none'", 'script-src': "'self'", 'form-action': `'self' ${s.rp.origin}` }));
      expect(policy).not.toContain('unsafe-inline');
    }
    // RFC 9207: the authorization response names the issuer.
    expect(callback.searchParams.get('iss')).toBe(issuer);
    const tokens = await oc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    expect(claims).toEqual(expect.objectContaining({ iss: issuer, aud: c.web.client.clientId, email: ADMIN.email, amr: ['pwd'], acr: 'urn:iam:acr:pwd' }));
    expect(typeof claims.email_verified).toBe('boolean');
    expect(typeof claims.auth_time).toBe('number');
    expect(tokens.refresh_token).toBeDefined();
    // [OIDCC-basic] userinfo with the access token of the code exchange: the same subject.
    expect(await oc.fetchUserInfo(config, tokens.access_token, claims.sub)).toEqual(expect.objectContaining({ sub: claims.sub, email: ADMIN.email }));
    // An access token for the API (RFC 8707 resource = JWT_AUDIENCE): an RFC 9068 JWT the gateway accepts.
    const api = await oc.refreshTokenGrant(config, tokens.refresh_token!, { resource: `${issuer}/api` });
    const [header, payload] = api.access_token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(header!.typ).toBe('at+jwt');
    // A third-party client: the permissions the user consented to (within its ceiling), no roles.
    expect(payload).toEqual(expect.objectContaining({ iss: issuer, aud: 'iam-api', sub: claims.sub, client_id: c.web.client.clientId, email: ADMIN.email, roles: [], permissions: ['users.manage'] }));
    expect((await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${api.access_token}` } })).status).toBe(200);
  }, 60_000);

  browserIt('a form post whose redirect would go to an origin not registered for this client is refused by Chromium (form-action), and the page stays', async () => {
    const { c } = s;
    // Another app's server: a registered redirect of another client, not of this one.
    const elsewhere = createServer((_req, res) => res.end('should not be reached'));
    const hits: string[] = [];
    elsewhere.on('request', (req) => hits.push(req.url ?? ''));
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.3', () => r()));
    const addr = elsewhere.address();
    const foreign = `http://127.0.0.3:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const a = await s.authorization(await s.discover(c.web));
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(a.url.href);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Allow access' }).waitFor();
      // The consent form is pointed elsewhere (what an injected form or a tampered page would do).
      await page.evaluate(`document.querySelector('form').setAttribute('action', ${JSON.stringify(`${foreign}/collect`)})`);
      // (Clicked from the page's own code: the refused navigation never ends, which a click would wait for.)
      await page.evaluate(`document.querySelector('button[value="allow"]').click()`);
      await eventually(async () => violations.some((v) => v.includes('form-action') && v.includes(foreign)), 10_000, 100);
      // And a same-origin form submission whose redirect leaves for another origin: the
      // authorization endpoint (GET: the provider takes no POST there) of a client whose redirect
      // URI is there (prompt=none answers with a redirect to it).
      const elsewhereClient = { client: { ...c.other.client, clientId: 'rp-elsewhere', redirectUris: [`${foreign}/callback`] }, secret: c.other.secret };
      s.clients.add(elsewhereClient.client, elsewhereClient.secret);
      const hop = (await s.authorization(await s.discover(elsewhereClient), { prompt: 'none', redirect_uri: `${foreign}/callback` })).url;
      const params = [...hop.searchParams];
      hop.search = '';
      violations.length = 0;
      await page.evaluate(
        `(() => { const f = document.querySelector('form'); f.setAttribute('action', ${JSON.stringify(hop.href)}); f.setAttribute('method', 'get'); f.innerHTML = ''; for (const [k, v] of ${JSON.stringify(params)}) { const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); } f.submit(); })()`,
      );
      // (Chromium's report names the form's own target, which 'self' allows: only the redirect to
      // the other origin can have broken the rule, and the request is blocked.)
      await eventually(async () => violations.some((v) => v.includes('form-action')), 10_000, 100);
      expect(hits).toEqual([]);
      expect(page.url().startsWith(foreign)).toBe(false);
    } finally {
      await context.close();
      s.clients.remove('rp-elsewhere');
      await new Promise<void>((r) => elsewhere.close(() => r()));
    }
  });

  browserIt('consent denied: the app gets access_denied at its redirect URI (the error shown to the RP), no code', async () => {
    const a = await s.authorization(await s.discover(s.c.web));
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(a.url.href);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Allow access' }).waitFor();
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    const back = await s.rp.next('/callback');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(a.state);
    expect(back.searchParams.get('iss')).toBe(s.issuer);
    expect(back.searchParams.get('code')).toBeNull();
  });

  browserIt('an invalid request the provider may redirect (no PKCE): the error arrives at the app; a redirect URI not registered: the hosted error page (accessible), never the redirect', async () => {
    const config = await s.discover(s.c.web);
    const noPkce = (await s.authorization(config)).url;
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(noPkce.href);
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      const back = await s.rp.next('/callback');
      expect(back.searchParams.get('error')).toBe('invalid_request');
      const wrong = (await s.authorization(config)).url;
      wrong.searchParams.set('redirect_uri', `${s.rp.origin}/elsewhere`);
      const res = await page.goto(wrong.href);
      expect(res?.status()).toBe(400);
      await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
      expect(await axe(page)).toEqual([]);
      expect(s.rp.requests.some((u) => u.pathname === '/elsewhere')).toBe(false);
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  browserIt('[RP-initiated logout] the confirmation page (accessible) posts, and the browser arrives at the registered post-logout URI with its state', async () => {
    const config = await s.discover(s.c.web);
    const { context, page, violations } = await cspContext(s.browser);
    try {
      const a = await s.authorization(config);
      await page.goto(a.url.href);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      const t = await s.oc.authorizationCodeGrant(config, await s.rp.next('/callback'), { pkceCodeVerifier: a.verifier, expectedState: a.state });
      await page.goto(s.oc.buildEndSessionUrl(config, { id_token_hint: t.id_token!, post_logout_redirect_uri: s.rp.signedOut, state: 'bye' }).href);
      await page.getByRole('heading', { name: 'Sign out' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
      const out = await s.rp.next('/signed-out');
      expect(out.searchParams.get('state')).toBe('bye');
      // The provider session is gone: prompt=none answers login_required at the app.
      await page.goto((await s.authorization(config, { prompt: 'none', scope: 'openid' })).url.href);
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect((await s.rp.next('/callback')).searchParams.get('error')).toBe('login_required');
    } finally {
      await context.close();
    }
  });

  browserIt('device flow (RFC 8628): the user code page (accessible) filled in Chromium, the device polls for its tokens; a wrong code is refused', async () => {
    const { oc, issuer, c } = s;
    const config = await s.discover(c.device);
    const d = await oc.initiateDeviceAuthorization(config, { scope: 'openid email offline_access users.manage' });
    expect(d.verification_uri).toBe(`${issuer}/oidc/device`);
    expect(d.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    // The device polls while the user goes through the pages.
    const polled = oc.pollDeviceAuthorizationGrant(config, d);
    const { context, page, violations } = await cspContext(s.browser);
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
      expect(violations).toEqual([]);
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
    await expect(oc.pollDeviceAuthorizationGrant(config, { ...d, interval: 0 })).rejects.toBeDefined();
  }, 60_000);
});
