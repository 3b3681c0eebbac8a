/**
 * Authlib (Debian's python3-authlib) as the relying party: rp-authlib.py, run with
 * /usr/bin/python3, serves its own redirect URI (another origin), and the browser part (sign-in,
 * consent) is walked in Chromium with the hosted pages' CSP enforced. Its JSON output is checked:
 * code + PKCE, the ID token validated against the JWKS, userinfo, refresh, introspection,
 * revocation, client_credentials with client_secret_basic and client_secret_post.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';
import { recordSkip } from '@iam/platform/testing';
import { browserTestsRunnable, cspContext, launchChromium } from './support/browser';
import { freePort, payloadOf } from './support/oidc-rp';
import { SYSTEM_PYTHON, hasAuthlib } from './support/real-rps';

jest.setTimeout(120_000);

if (!hasAuthlib) recordSkip({ file: __filename, reason: `${SYSTEM_PYTHON} cannot import authlib`, fix: 'apt-get install -y python3-authlib' });
const ready = browserTestsRunnable(__filename) && hasAuthlib;
const authlibIt = ready ? it : it.skip;

describe('Authlib signs in through the hosted pages', () => {
  let sys: TestSystem;
  let issuer: string;
  /** rp-authlib.py's output. */
  let out: Record<string, unknown> = {};
  let violations: string[] = [];
  let service = '';

  beforeAll(async () => {
    if (!ready) return;
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    const admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    // Its redirect URI on its own port (another origin), free now.
    const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    const app = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: 'Authlib app', type: 'confidential', redirectUris: [redirectUri], grantTypes: ['authorization_code', 'refresh_token'] },
    });
    const svc = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: { name: 'Authlib job', type: 'confidential', grantTypes: ['client_credentials'], roles: ['Administrator'] } });
    expect([app.status, svc.status]).toEqual([201, 201]);
    service = svc.json.clientId as string;
    const args = { issuer, client_id: app.json.clientId, client_secret: app.json.clientSecret, redirect_uri: redirectUri, service_id: service, service_secret: svc.json.clientSecret };
    // The browser first: a line the script prints before the loop below reads is lost (readline's iterator).
    const browser = await launchChromium();
    const py: ChildProcess = spawn(SYSTEM_PYTHON, [join(__dirname, 'rp-authlib.py'), JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    py.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => py.once('exit', (code) => resolve(code)));
    const lines = createInterface({ input: py.stdout! });
    try {
      for await (const line of lines) {
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (typeof msg.authorize !== 'string') {
          out = msg;
          continue;
        }
        // The browser part: the hosted sign-in and consent, back at the script's redirect URI.
        const c = await cspContext(browser);
        violations = c.violations;
        try {
          await c.page.goto(msg.authorize);
          await c.page.getByLabel('Email').fill(ADMIN.email);
          await c.page.getByLabel('Password').fill(ADMIN.password);
          await c.page.getByRole('button', { name: 'Sign in', exact: true }).click();
          await c.page.getByRole('heading', { name: 'Allow access' }).waitFor();
          await c.page.getByRole('button', { name: 'Allow' }).click();
          await c.page.getByRole('heading', { name: 'Back at the app' }).waitFor();
        } finally {
          await c.context.close();
        }
      }
    } finally {
      await browser.close();
    }
    expect({ exit: await exited, stderr }).toEqual({ exit: 0, stderr: '' });
  }, 120_000);

  afterAll(async () => {
    await sys?.stop();
  });

  authlibIt('code + PKCE through the hosted pages (CSP enforced, back at its own origin); the ID token validated against the JWKS', () => {
    expect(violations).toEqual([]);
    expect(out.callback_iss).toBe(issuer);
    expect(out.id_token_signing_alg_values_supported).toContain('RS256');
    expect(out.id_token_kid_in_jwks).toBe(true);
    expect(out.id_token).toEqual(expect.objectContaining({ iss: issuer, email: ADMIN.email, amr: ['pwd'], acr: 'urn:iam:acr:pwd' }));
    if ('at_hash_ok' in out) expect(out.at_hash_ok).toBe(true);
  });

  authlibIt('userinfo with the access token of the code exchange: the same subject', () => {
    const sub = (out.id_token as { sub: string }).sub;
    expect(out.userinfo_status).toBe(200);
    expect(out.userinfo).toEqual(expect.objectContaining({ sub, email: ADMIN.email }));
  });

  authlibIt('refresh (rotated), introspection of its refresh token, revocation: then inactive and refused', () => {
    expect(out.refreshed).toEqual({ new_access_token: true, rotated: true });
    expect(out.introspection).toEqual(expect.objectContaining({ active: true, client_id: expect.any(String), iss: issuer }));
    expect(out.revocation_status).toBe(200);
    expect(out.introspection_after_revocation).toEqual({ active: false });
    expect(out.refresh_after_revocation).toBe('invalid_grant');
  });

  authlibIt('client_credentials with client_secret_basic and with client_secret_post: API tokens of the service the gateway accepts', async () => {
    const cc = out.client_credentials as Record<string, string>;
    for (const method of ['client_secret_basic', 'client_secret_post']) {
      expect({ method, payload: payloadOf(cc[method]!) }).toEqual({ method, payload: expect.objectContaining({ sub: service, client_id: service, roles: ['Administrator'] }) });
      expect((await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${cc[method]}` } })).status).toBe(200);
    }
  });

  // Needs issue #36 item 4 (a token from a plain code exchange works at the API; op-interop's branch).
  authlibIt('the access token of its code exchange works at /api/v1/me', async () => {
    expect(out.api_me_status).toBe(200);
  });
});
