/**
 * Users imported with passwordChangeRequired (issue #39) choose a new password at sign-in, as a
 * step of the one sign-in flow: through REST (401 password-change-required with an mfaToken that
 * takes newPassword at POST /api/v1/auth/mfa) and through the hosted page in Chromium (the
 * "Choose a new password" page, CSP enforced, the app on another origin). The step cannot be
 * skipped (a factor, the consent or the token again) and is audited with the user as its actor;
 * the sign-in it completes is not ended by the password change's event.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '@iam/platform/testing';
import { VECTORS } from '../../../services/directory/src/infra/hashes/vectors';
import { http } from './harness';
import { axe, cspContext } from './support/browser';
import { browserTest, oidcSuite } from './support/oidc-suite';

const browserIt = browserTest(__filename);
/** A cheap legacy hash (argon2id, 4 MiB) and its password. */
const LEGACY = VECTORS.find((v) => v.family === 'argon2id' && v.source === 'passwap')!;

interface Entry {
  action: string;
  actor: { type: string; id: string | null };
  changes: Array<{ field: string; redacted?: boolean }>;
}

describe('passwordChangeRequired: a new password at sign-in (REST and the hosted page)', () => {
  const s = oidcSuite();
  const strong = () => `Chosen!${randomBytes(6).toString('hex')}#Aa9`;

  /** Imports one user with the flag; its id and email. */
  async function imported(): Promise<{ id: string; email: string }> {
    const email = `must-change-${randomBytes(4).toString('hex')}@example.com`;
    const res = await s.asAdmin('POST', '/api/v1/users/import', [{ firstName: 'Ada', lastName: 'Imported', email, passwordHash: LEGACY.hash, passwordChangeRequired: true }]);
    expect(res.status).toBe(200);
    const [line] = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { status: string; id: string });
    expect(line).toMatchObject({ status: 'created' });
    return { id: line!.id, email };
  }
  const login = (email: string, password: string) => http(s.issuer, 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } });
  const answer = (body: Record<string, unknown>) => http(s.issuer, 'POST', '/api/v1/auth/mfa', { body });

  it('REST: the right password answers password-change-required; a factor, a weak or the same password do not pass; the new one signs in, once', async () => {
    const u = await imported();
    const first = await login(u.email, LEGACY.password);
    expect(first.status).toBe(401);
    expect(first.json).toMatchObject({ type: 'urn:iam:problem:password-change-required', mfaToken: expect.any(String), methods: [], expiresIn: 300, traceId: expect.any(String) });
    const mfaToken = first.json.mfaToken as string;

    // Not skipped: a factor answers nothing here, and neither does a weak or the current password.
    expect((await answer({ mfaToken, code: '123456' })).status).toBe(409);
    const weak = await answer({ mfaToken, newPassword: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.json.errors).toEqual([expect.objectContaining({ field: 'body.newPassword' })]);
    expect((await answer({ mfaToken, newPassword: LEGACY.password })).status).toBe(400);
    expect((await answer({ mfaToken, newPassword: strong(), code: '123456' })).status).toBe(400);

    const chosen = strong();
    const done = await answer({ mfaToken, newPassword: chosen });
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ token: expect.any(String), refreshToken: expect.any(String), user: { email: u.email } });
    // The token is spent; the old password is gone; the new one signs in with no further step.
    expect((await answer({ mfaToken, newPassword: strong() })).status).toBe(401);
    expect((await login(u.email, LEGACY.password)).status).toBe(401);
    expect((await login(u.email, chosen)).status).toBe(200);

    // Audited as the user's own change (the password redacted) ...
    const entry = await eventually(async () => {
      const items = ((await (await s.asAdmin('GET', `/api/v1/audit-events?targetId=${u.id}&pageSize=100`)).json()) as { items: Entry[] }).items;
      return items.find((e) => e.action === 'user.updated' && e.changes.some((c) => c.field === 'password'));
    }, 10_000, 100);
    expect(entry).toMatchObject({ actor: { type: 'user', id: u.id }, changes: [{ field: 'password', redacted: true }] });
    // ... and the session it started lives on after the change's event (its refresh token works).
    const refreshed = await http(s.issuer, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: done.json.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect((await http(s.issuer, 'GET', '/api/v1/me', { token: refreshed.json.token as string })).status).toBe(200);
  });

  browserIt('the hosted page: sign-in, then "Choose a new password" (accessible, CSP enforced); no skipping to the factor or consent; then consent and back at the app', async () => {
    const u = await imported();
    const config = await s.discover(s.c.web);
    const { url, verifier, state } = await s.authorization(config, { login_hint: u.email });
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(url.href);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      // login_hint prefilled.
      expect(await page.getByLabel('Email').inputValue()).toBe(u.email);
      await page.getByLabel('Password').fill(LEGACY.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      expect(await axe(page)).toEqual([]);
      expect(await page.getByText('At least 12 characters').count()).toBe(1);

      // The other steps of this interaction refuse while the new password is pending.
      const action = (await page.locator('form[method="post"]').first().getAttribute('action'))!;
      const base = `${s.issuer}${action.replace(/\/password$/, '')}`;
      expect((await page.request.post(`${base}/factor`, { form: { code: '123456' } })).status()).toBe(400);
      expect((await page.request.post(`${base}/consent`, { form: { decision: 'allow' } })).status()).toBe(400);

      await page.getByLabel('New password').fill('short');
      await page.getByRole('button', { name: 'Set the new password and continue' }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('New password').fill(strong());
      await page.getByRole('button', { name: 'Set the new password and continue' }).click();
      await page.getByRole('heading', { name: 'Allow access' }).waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    const callback = await s.rp.next('/callback');
    const tokens = await s.oc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()).toMatchObject({ sub: u.id, amr: ['pwd'] });
    // The next sign-in asks nothing more.
    expect((await login(u.email, LEGACY.password)).status).toBe(401);
  });
});
