/**
 * Issue #23's walk in a real browser (Debian's Chromium driven by playwright-core), as a newcomer
 * meets it: the all-in-one process started as `make run` starts it (make-run.ts: no SMTP_URL, no
 * EMAIL_ACTION_BASE_URL; its databases on the test PostgreSQL), then: sign in to the console, send a password reset for a user, read
 * the mail in "Mailbox (development)", follow its link to the hosted reset page, see the policy
 * as you type, set a new password and sign in with it (REST login); the used link again (a clear
 * message naming nothing); an email verification the same way. axe-core on every page (nothing
 * serious or critical); the attacker's checks: the token leaves the address bar, no request of a
 * hosted page carries a Referer, the pages refuse framing, the process's log never holds a token (nor a code or token of the OpenID provider's).
 * Screenshots: console/test-output/mailbox/ (gitignored); two are in the README
 * (console/docs/mailbox.png, console/docs/reset-password.png, copied by hand).
 * Skipped, saying why, without /usr/bin/chromium or a built tree (make build).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { browserTestsRunnable, eventually } from '@iam/platform/testing';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, axeOf, launchProfile, watchCsp } from './browser';
import { AccountPage, ResetPasswordPage, VerifyEmailPage } from './hosted-pages';
import { MAIN, type MakeRun, startMakeRun } from './make-run';
import { ConsoleApp, MailboxPage, SignInPage } from './pages';

const DIST = join(__dirname, '..', 'dist', 'reset-password.html');
const OUT = join(__dirname, '..', 'test-output', 'mailbox');
const suite = browserTestsRunnable(__filename, { paths: [DIST, MAIN], fix: 'make build' }) ? describe : describe.skip;
const ADMIN = { email: 'admin@example.com', password: 'Admin-Passw0rd!' };

jest.setTimeout(240_000);

suite('make run: mail flows through the development mailbox and the hosted pages, in Chromium', () => {
  let system: MakeRun | undefined;
  let base: string;
  let context: BrowserContext;
  let userDataDir: string;
  let app: ConsoleApp;
  let shot = 0;
  /** The user's own browser (no console session): the account page and the OP's sign-in. */
  let userBrowser: Browser;
  let userPage: Page;
  /** Each request a hosted page made, with its Referer header (none expected). */
  const hostedRequests: Array<{ url: string; referer: string | undefined }> = [];
  const tokens: string[] = [];
  /** What Chromium refused under the pages' CSP, in both browsers (none expected). */
  let cspViolations: string[] = [];
  /** What the OpenID provider gave the browsers: authorization codes and the token endpoint's tokens. */
  const opSecrets: string[] = [];
  const run = Date.now().toString(36);
  const user = { email: `ada.${run}@example.com`, password: 'First-Passw0rd!2026', next: 'Second-Passw0rd!2026', third: 'Third-Passw0rd!2026', newEmail: `ada.king.${run}@example.com` };

  const screenshot = async (page: Page, name: string) => page.screenshot({ path: join(OUT, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  const expectAccessible = async (page: Page, name: string) => {
    await screenshot(page, name);
    expect({ page: name, violations: await axeOf(page) }).toEqual({ page: name, violations: [] });
  };
  const api = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const login = (email: string, password: string) => api('POST', '/api/v1/auth/generate-jwt', { email, password });
  /** Records every request for or from a hosted page (its navigation, assets and API calls) with its Referer. */
  const watchHosted = (ctx: BrowserContext) =>
    ctx.on('request', (r) => {
      let from = '';
      try {
        from = r.frame().url();
      } catch {
        // a service worker's request has no frame
      }
      if (/\/(reset-password|verify-email|account)/.test(`${r.url()} ${from}`)) hostedRequests.push({ url: r.url(), referer: r.headers()['referer'] });
    });

  /** Collects the codes the OP redirects with and the tokens its token endpoint answers (for the log check). */
  const watchOp = (ctx: BrowserContext) => {
    ctx.on('request', (r) => {
      const code = new URL(r.url()).searchParams.get('code');
      if (code && r.isNavigationRequest()) opSecrets.push(code);
    });
    ctx.on('response', (r) => {
      if (!r.url().endsWith('/oidc/token') || r.status() !== 200) return;
      void r
        .json()
        .then((body: Record<string, unknown>) => {
          for (const k of ['access_token', 'refresh_token', 'id_token']) if (typeof body[k] === 'string') opSecrets.push(body[k]);
        })
        .catch(() => undefined);
    });
  };

  beforeAll(async () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    system = await startMakeRun('mailbox_walk', ADMIN);
    base = system.base;

    ({ context, userDataDir, cspViolations } = await launchProfile('mailbox-chromium-'));
    watchHosted(context);
    watchOp(context);
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);
    app = new ConsoleApp(page, base, OUT);
  }, 240_000);

  afterAll(async () => {
    await userBrowser?.close();
    await context?.close();
    await system?.stop();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  it('says at start that mail is kept in the development mailbox', () => {
    expect(system!.log()).toContain('no SMTP_URL: mail is kept in the development mailbox');
  });

  it('the console signs in through the OpenID provider, stays signed in across a reload, and shows "Mailbox (development)"; a reset mail for a user lands in it', async () => {
    await app.open();
    await app.page.getByRole('heading', { level: 1, name: 'Sign in to the IAM console' }).waitFor();
    await expectAccessible(app.page, 'console-sign-in');
    const signIn = new SignInPage(app);
    await signIn.openProvider();
    expect(new URL(app.page.url()).pathname).toMatch(/^\/oidc\/interaction\//);
    await expectAccessible(app.page, 'op-sign-in');
    await signIn.submit(ADMIN.email, ADMIN.password);
    const mailboxLink = app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailbox (development)' });
    await mailboxLink.waitFor();
    // A reload keeps the administrator signed in (the OP's session, a silent prompt=none), though
    // no token is stored anywhere the page's scripts could read it.
    await app.page.reload();
    await mailboxLink.waitFor();
    expect(await app.page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length, cookies: document.cookie }))).toEqual({ local: 0, session: 0, cookies: '' });
    const admin = (await login(ADMIN.email, ADMIN.password)).json.token as string;
    const created = await api('POST', '/api/v1/users', { firstName: 'Ada', lastName: 'Lovelace', email: user.email, password: user.password }, admin);
    expect(created.status).toBe(201);
    // The console's own reset button (Users → edit) sends the same request.
    expect((await api('POST', '/api/v1/auth/password-reset/request', { email: user.email })).status).toBe(202);
    const mailbox = new MailboxPage(app);
    await mailbox.open();
    await app.page.getByRole('heading', { level: 1, name: 'Mailbox (development)' }).waitFor();
    await mailbox.read(user.email, 'Reset your password');
    await expect(mailbox.link('/reset-password').textContent()).resolves.toMatch(new RegExp(`^${base}/reset-password\\?token=[A-Za-z0-9_-]{43}$`));
    // The HTML part sits in a sandboxed frame (no scripts), the text part as text.
    await expect(app.page.locator('iframe.mail-html').getAttribute('sandbox')).resolves.toBe('');
    await expectAccessible(app.page, 'mailbox-reset-mail');
    await app.page.getByRole('link', { name: 'Back to the mailbox' }).click();
    await expectAccessible(app.page, 'mailbox');
    await mailbox.read(user.email, 'Reset your password');
  });

  it('the link opens the hosted reset page: the token leaves the address bar, the policy shows as you type, the new password works', async () => {
    const mailbox = new MailboxPage(app);
    tokens.push(new URL((await mailbox.link('/reset-password').textContent())!).searchParams.get('token')!);
    const tab = await mailbox.follow('/reset-password');
    const reset = new ResetPasswordPage(tab);
    await expect(reset.heading().textContent()).resolves.toBe('Choose a new password');
    expect(tab.url()).toBe(`${base}/reset-password`);
    await expectAccessible(tab, 'reset-password');
    await reset.type('short');
    expect(await reset.checklist()).toEqual([
      'At least 12 characters (not yet)',
      'An uppercase letter (not yet)',
      'A lowercase letter (done)',
      'A digit (not yet)',
      'A special character (not a letter, digit or space) (not yet)',
      'No control characters (done)',
    ]);
    await reset.submit();
    await expect(tab.getByLabel('New password').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(tab.locator('.field-error').textContent()).resolves.toMatch(/does not meet 4 requirements/);
    await expectAccessible(tab, 'reset-password-policy');
    await reset.type(user.next);
    expect((await reset.checklist()).every((c) => c.endsWith('(done)'))).toBe(true);
    await reset.submit();
    await tab.getByRole('heading', { level: 1, name: 'Your password is changed' }).waitFor();
    await expectAccessible(tab, 'reset-password-done');
    // A finished reset leads back to sign-in (the account page signs in through the provider).
    await expect(tab.getByRole('link', { name: 'Sign in', exact: true }).getAttribute('href')).resolves.toBe('/account');
    await tab.close();
    expect((await login(user.email, user.password)).status).toBe(401);
    expect((await login(user.email, user.next)).status).toBe(200);
  });

  it('the new password signs the user in on the OP\'s page (the account page, in their own browser); the old one is refused there', async () => {
    userBrowser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    // Every page's CSP enforced (axe-core goes through the DevTools protocol), its refusals collected.
    const ctx = await userBrowser.newContext({ viewport: { width: 1000, height: 800 }, bypassCSP: false });
    watchCsp(ctx, cspViolations);
    watchHosted(ctx);
    watchOp(ctx);
    userPage = await ctx.newPage();
    userPage.setDefaultTimeout(10_000);
    await userPage.goto(`${base}/account`);
    await userPage.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await expectAccessible(userPage, 'account-signed-out');
    await userPage.getByRole('button', { name: 'Sign in', exact: true }).click();
    await userPage.getByRole('heading', { name: 'Sign in', exact: true, level: 1 }).waitFor();
    // Every page reachable from the others: the sign-in page's "Forgot your password?" asks for a
    // reset link (answered alike for any address), whose page leads back to sign-in.
    await userPage.getByRole('link', { name: 'Forgot your password?' }).click();
    await userPage.getByRole('heading', { level: 1, name: 'Forgot your password?' }).waitFor();
    expect(userPage.url()).toBe(`${base}/reset-password`);
    await expectAccessible(userPage, 'reset-request');
    await userPage.getByLabel('Email').fill(`nobody.${run}@example.com`);
    await userPage.getByRole('button', { name: 'Send the link' }).click();
    await userPage.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    await expectAccessible(userPage, 'reset-requested');
    await userPage.getByRole('link', { name: 'Back to sign in' }).click();
    await userPage.getByRole('button', { name: 'Sign in', exact: true }).click();
    await userPage.getByRole('heading', { name: 'Sign in', exact: true, level: 1 }).waitFor();
    await userPage.getByLabel('Email').fill(user.email);
    await userPage.getByLabel('Password').fill(user.password);
    await userPage.getByRole('button', { name: 'Sign in', exact: true }).click();
    await userPage.getByRole('alert').filter({ hasText: 'The email or password is incorrect' }).waitFor();
    await expectAccessible(userPage, 'op-sign-in-refused');
    await userPage.getByLabel('Password').fill(user.next);
    await userPage.getByRole('button', { name: 'Sign in', exact: true }).click();
    const account = new AccountPage(userPage);
    await account.section('Sessions').waitFor();
    expect(userPage.url()).toBe(`${base}/account`);
    await expect(account.section('Email address').textContent()).resolves.toContain(user.email);
    await expectAccessible(userPage, 'account');
  });

  it('the used link again: one clear message that names nothing of the account', async () => {
    const tab = await new MailboxPage(app).follow('/reset-password');
    const reset = new ResetPasswordPage(tab);
    await reset.type('Third-Passw0rd!2026');
    await reset.submit();
    await tab.getByRole('heading', { level: 1, name: 'This link cannot be used' }).waitFor();
    const text = await tab.locator('body').innerText();
    expect(text).toContain('already used, it has expired, or it is incomplete');
    for (const secret of [user.email, 'Ada', 'Lovelace', tokens[0]!]) expect(text).not.toContain(secret);
    await expectAccessible(tab, 'reset-password-used');
    await tab.close();
    expect((await login(user.email, user.next)).status).toBe(200);
  });

  it('an email verification the same way: the page changes nothing until "Verify" is pressed', async () => {
    const token = (await login(user.email, user.next)).json.token as string;
    expect((await api('POST', '/api/v1/auth/email-verification/request', undefined, token)).status).toBe(202);
    const mailbox = new MailboxPage(app);
    await app.page.getByRole('link', { name: 'Back to the mailbox' }).click();
    await mailbox.read(user.email, 'Confirm your email address');
    tokens.push(new URL((await mailbox.link('/verify-email').textContent())!).searchParams.get('token')!);
    const tab = await mailbox.follow('/verify-email');
    const verify = new VerifyEmailPage(tab);
    await expect(verify.heading().textContent()).resolves.toBe('Confirm your email address');
    expect(tab.url()).toBe(`${base}/verify-email`);
    await expectAccessible(tab, 'verify-email');
    const admin = (await login(ADMIN.email, ADMIN.password)).json.token as string;
    const record = async () => (await api('GET', `/api/v1/users?q=${encodeURIComponent(user.email)}`, undefined, admin)).json.items as Array<{ emailVerified: boolean }>;
    // Opening the link (as a mail scanner would) verified nothing.
    expect((await record())[0]!.emailVerified).toBe(false);
    await verify.verify();
    await tab.getByRole('heading', { level: 1, name: 'Your email address is confirmed' }).waitFor();
    await expectAccessible(tab, 'verify-email-done');
    await tab.close();
    expect((await record())[0]!.emailVerified).toBe(true);
  });

  it('the account page: names, sessions (end one), a wrong current password refused, then an email change verified through the mailbox', async () => {
    const account = new AccountPage(userPage);
    // A reload: signed in again at once through the OP's session, the sessions list fresh.
    await userPage.reload();
    await account.section('Sessions').getByRole('table').waitFor();
    expect(userPage.url()).toBe(`${base}/account`);
    await account.saveNames('Ada', 'King');
    await account.section('Profile').getByRole('status').filter({ hasText: 'Your names are saved.' }).waitFor();
    await userPage.getByText('Signed in as Ada King.').waitFor();
    // The REST logins above are sessions of this account: one is ended from here.
    const before = await account.sessions().count();
    expect(before).toBeGreaterThan(1);
    // (The page's own provider session is listed too, as this one, with no End button.)
    await account.sessions().filter({ has: userPage.getByRole('button', { name: /^End the session/ }) }).first().getByRole('button', { name: /^End the session/ }).click();
    await account.section('Sessions').getByRole('button', { name: 'End session' }).click();
    await account.section('Sessions').getByRole('status').filter({ hasText: 'The session has ended.' }).waitFor();
    await eventually(async () => (await account.sessions().count()) === before - 1, 10_000, 200);
    await expectAccessible(userPage, 'account-sessions');
    // The password is asked again: a wrong one is refused beside its field, nothing changes.
    await account.changePassword('Not-Her-Passw0rd!', user.third);
    await account.section('Password').locator('.field-error').filter({ hasText: 'is not correct' }).waitFor();
    await expectAccessible(userPage, 'account-password-refused');
    expect((await login(user.email, user.next)).status).toBe(200);
    // The email change: the new address at once (unverified), a verification mail to it, and
    // every session ended (the page asks to sign in again).
    await account.changeEmail(user.newEmail, user.next);
    await userPage.getByRole('status').filter({ hasText: `A verification email was sent to ${user.newEmail}` }).waitFor();
    await expectAccessible(userPage, 'account-email-changed');
    expect((await login(user.email, user.next)).status).toBe(401);
    expect((await login(user.newEmail, user.next)).status).toBe(200);
    const mailbox = new MailboxPage(app);
    await mailbox.open();
    await mailbox.read(user.newEmail, 'Confirm your email address');
    tokens.push(new URL((await mailbox.link('/verify-email').textContent())!).searchParams.get('token')!);
    const tab = await mailbox.follow('/verify-email');
    await new VerifyEmailPage(tab).verify();
    await tab.getByRole('heading', { level: 1, name: 'Your email address is confirmed' }).waitFor();
    await tab.close();
    await userPage.goto(`${base}/account`);
    const signIn = userPage.getByRole('button', { name: 'Sign in', exact: true });
    const email = account.section('Email address');
    await signIn.or(email).first().waitFor();
    if (await signIn.isVisible()) await account.signIn(user.newEmail, user.next);
    await email.filter({ hasText: `${user.newEmail} (verified)` }).waitFor();
    await expectAccessible(userPage, 'account-verified');
    // On a phone (390 px): nothing wider than the screen (the sessions table scrolls in its region).
    await userPage.setViewportSize({ width: 390, height: 844 });
    await account.section('Sessions').getByRole('table').waitFor();
    expect(await userPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(userPage, 'account-phone');
    await userPage.setViewportSize({ width: 1000, height: 800 });
    // Sign out everywhere: every session of the account (a REST one here) and its sign-in at the
    // OP end; the provider confirms, and the page is signed out.
    const rest = (await login(user.newEmail, user.next)).json.token as string;
    await account.section('Sessions').getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
    await account.section('Sessions').getByRole('button', { name: 'Sign out everywhere, here too' }).click();
    // The provider asks to confirm while it still has this browser's session; once the
    // revocation has reached it (within a second) there is nothing left to confirm.
    const confirm = userPage.getByRole('heading', { name: 'Sign out', level: 1 });
    const signedOut = userPage.getByRole('button', { name: 'Sign in', exact: true });
    await confirm.or(signedOut).first().waitFor();
    if (await confirm.isVisible()) await userPage.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signedOut.waitFor();
    expect(userPage.url()).toBe(`${base}/account`);
    await eventually(async () => (await api('GET', '/api/v1/me', undefined, rest)).status === 401, 5_000, 100);
  });

  it('the attacker\'s checks: no Referer from the hosted pages, no framing, and no token in the log', async () => {
    // Two visits of the reset page and one of the verify page: the pages, their scripts and styles, their calls.
    expect(hostedRequests.filter((r) => /\/assets\/.+\.js$/.test(r.url)).length).toBeGreaterThan(4);
    expect(hostedRequests.filter((r) => /\/api\/v1\/auth\/.+\/confirm$/.test(r.url)).length).toBe(4);
    expect(hostedRequests.filter((r) => /\/api\/v1\/me\b/.test(r.url)).length).toBeGreaterThan(2);
    // No Referer, or an empty one (as the browser reports a request under no-referrer): nothing names the page.
    expect(hostedRequests.filter((r) => r.referer)).toEqual([]);
    for (const path of ['/reset-password', '/verify-email', '/account']) {
      const res = await fetch(`${base}${path}?token=x`);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    // A page that frames the reset page shows nothing of it.
    const framer = await context.newPage();
    await framer.setContent(`<iframe src="${base}/reset-password?token=${tokens[0]}"></iframe>`);
    await framer.waitForTimeout(500);
    const frame = framer.frames().find((f) => f.url().includes('/reset-password'));
    expect(frame ? await frame.locator('h1').count() : 0).toBe(0);
    await framer.close();
    // Under their real CSP (a browser of its own, no bypass): both pages run, with no refusal.
    const strict = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      const page = await strict.newPage();
      const refusals: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) refusals.push(m.text());
      });
      for (const [path, title] of [['/reset-password', 'Choose a new password'], ['/verify-email', 'Confirm your email address']] as const) {
        await page.goto(`${base}${path}?token=not-a-real-token`);
        await page.getByRole('heading', { level: 1, name: title }).waitFor({ timeout: 10_000 });
        expect(page.url()).toBe(`${base}${path}`);
      }
      await page.goto(`${base}/reset-password`);
      await page.getByRole('heading', { level: 1, name: 'Forgot your password?' }).waitFor({ timeout: 10_000 });
      // The account page: its silent check at the OP (a top-level redirect there and back) and
      // its "Sign in", with no refusal either; the OP's answer leaves the address bar.
      await page.goto(`${base}/account`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor({ timeout: 10_000 });
      expect(page.url()).toBe(`${base}/account`);
      // The provider's sign-in page under its CSP: its stylesheet and passkey scripts load.
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('link', { name: 'Forgot your password?' }).waitFor({ timeout: 10_000 });
      expect(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).maxWidth)).toBe('416px');
      expect(refusals).toEqual([]);
    } finally {
      await strict.close();
    }
    // The process logged every request (LOG_LEVEL=debug), by route: never a token.
    const log = system!.log();
    expect(log).toContain('"route":"/reset-password"');
    // The whole walk ran under the pages' CSP: nothing of a hosted page (the provider's included)
    // was refused. (The mailbox shows a mail's HTML in a sandboxed frame under the console's CSP,
    // which refuses the mail's inline styles by design; the framing above is refused on purpose.)
    const hosted = /^https?:\/\/[^/]+\/(reset-password|verify-email|account|oidc)\b/;
    expect(cspViolations.filter((v) => hosted.test(v))).toEqual([]);
    for (const t of tokens) expect(log).not.toContain(t);
    for (const p of [ADMIN.password, user.password, user.next]) expect(log).not.toContain(p);
    // Nor anything the OpenID provider gave the browsers: codes, access, refresh and ID tokens.
    expect(opSecrets.length).toBeGreaterThan(6);
    expect(opSecrets.filter((t) => log.includes(t))).toEqual([]);
  });
});
