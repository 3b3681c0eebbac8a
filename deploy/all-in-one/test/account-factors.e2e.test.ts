/**
 * The account page's second-factor sections in Chromium (issue #24): an authenticator app set up
 * with its QR code and key, recovery codes shown once, a passkey added with Chromium's virtual
 * authenticator (the DevTools Protocol's WebAuthn domain), then signed out and signed in again
 * with the passkey alone; axe finds nothing serious or critical. Needs the console's build
 * (console/dist, `make build`); skipped without it or without Chromium.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { totp } from './support/factors';
import { axe, browserTestsRunnable, launchChromium } from './support/browser';

jest.setTimeout(120_000);

const runnable = browserTestsRunnable(__filename, { paths: [join(__dirname, '..', '..', '..', 'console', 'dist', 'account.html')], fix: 'make build' });
const suite = runnable ? describe : describe.skip;
/** In this helper's port range. */
const PORT = 27320;
const ORIGIN = `http://localhost:${PORT}`;
/** Where the screenshots go (console/test-output/account, beside the console's own). */
const SHOTS = join(__dirname, '..', '..', '..', 'console', 'test-output', 'account');



suite('account page: second factors and passkeys (Chromium)', () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { PORT: String(PORT), PUBLIC_URL: ORIGIN } });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  it('sets up an authenticator app (QR code) and recovery codes, adds a passkey, signs out, and signs in with the passkey alone', async () => {
    const admin = (await http(sys.url(0), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const email = uniqueEmail('acct');
    const password = strongPassword();
    expect((await http(sys.url(0), 'POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Byron', email, password } })).status).toBe(201);

    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    try {
      await page.goto(`${ORIGIN}/account`);
      const signInButton = page.getByRole('button', { name: 'Sign in', exact: true });
      await signInButton.waitFor();
      if (await page.getByRole('heading', { name: 'Your account' }).isVisible()) await signInButton.click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Second factors' }).waitFor();

      // The authenticator app: QR code and key, then its first code.
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.getByRole('img', { name: 'QR code of the authenticator app key' }).waitFor();
      const key = (await page.locator('figcaption code').textContent())!.replace(/\s/g, '');
      await page.getByLabel('Code from your authenticator app').fill(totp(key));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByText('The authenticator app is on.').waitFor();

      // Recovery codes, shown once.
      await page.getByRole('button', { name: 'Make recovery codes' }).click();
      await page.getByRole('button', { name: 'Make new codes (the old ones stop working)' }).click();
      await page.getByText('Your new recovery codes, shown only now').waitFor();
      expect(await page.locator('.recovery-codes li').count()).toBe(10);

      // A passkey, named.
      await page.getByLabel('Name of the new passkey').fill('Chromium');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('The passkey is added.').waitFor();
      await page.getByRole('region', { name: 'Your passkeys' }).getByText('Chromium').waitFor();
      // Kept for the console README: the account page with every factor set up.
      mkdirSync(SHOTS, { recursive: true });
      await page.setViewportSize({ width: 1000, height: 1400 });
      await page.getByRole('heading', { name: 'Second factors' }).evaluate((h: { scrollIntoView(o: { block: 'start' }): void }) => h.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: join(SHOTS, 'account-factors.png') });
      expect(await axe(page)).toEqual([]);

      // Signed out (here and at the provider: its confirmation page), then in again with the passkey alone.
      await page.getByRole('button', { name: 'Sign out' }).first().click();
      await page.waitForURL((u) => u.pathname.startsWith('/oidc/session/end'));
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL((u) => u.pathname === '/account');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((u) => u.pathname.startsWith('/oidc/interaction/'));
      // No password typed: the browser's passkey autofill (conditional UI; Chromium's virtual
      // authenticator answers it at once) or, when it does not, the "Sign in with a passkey" button.
      const back = page.waitForURL((u) => u.pathname === '/account', { timeout: 15_000 });
      await Promise.race([back, page.getByRole('button', { name: 'Sign in with a passkey' }).click({ timeout: 5_000 }).catch(() => undefined)]);
      await back;
      await page.getByRole('heading', { name: 'Second factors' }).waitFor();
      const row = page.getByRole('region', { name: 'Your passkeys' }).getByRole('row', { name: /Chromium/ });
      await row.waitFor();
      expect(await row.getByRole('cell').nth(3).textContent()).not.toBe('never');
      // The earlier session ended with the sign-out: this one alone.
      await page.getByRole('region', { name: 'Your sessions' }).getByText('(this session)').waitFor();
      expect(await page.getByRole('region', { name: 'Your sessions' }).getByRole('row').count()).toBe(2);
    } finally {
      await context.close();
    }
  });
});
