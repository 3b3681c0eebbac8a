/**
 * An organization invitation's link in a real browser (Debian's Chromium, CSP enforced): the mail
 * notification sends (through a real SMTP sink) links to `/account?invitation=…`; the account page
 * takes the token out of the address at once, signs the invitee in through the OpenID provider,
 * and offers to join; joining makes the invitee a member, and the link then works no more.
 * Skipped, saying why, without /usr/bin/chromium or a built console, and against a running system
 * (it reads the mail). Screenshots: console/test-output/invitation/.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type SmtpSink, browserTestsRunnable, startSmtpSink } from '@iam/platform/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from '../../deploy/all-in-one/test/harness';
import { launchProfile } from './browser';
import { AccountPage } from './hosted-pages';
import { freePort } from './support';

const DIST = join(__dirname, '..', 'dist', 'account.html');
const OUT = join(__dirname, '..', 'test-output', 'invitation');
const external = process.env.CONSOLE_TEST_BASE_URL;
if (external) console.warn('console invitation walk skipped: it reads the invitation mail of a system it starts (it runs in make test)');
const suite = !external && browserTestsRunnable(__filename, { paths: [DIST], fix: 'make build' }) ? describe : describe.skip;

jest.setTimeout(180_000);

suite('an organization invitation accepted on the account page (Chromium)', () => {
  let system: TestSystem;
  let smtp: SmtpSink;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let cspViolations: string[];

  beforeAll(async () => {
    smtp = await startSmtpSink();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: base, SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: base } });
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    ({ context, userDataDir, cspViolations } = await launchProfile('console-invitation-'));
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await page?.screenshot({ path: join(OUT, 'last.png') }).catch(() => undefined);
    await context?.close();
    await system?.stop();
    await smtp?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  it('the mailed link signs the invitee in and joins the organization once; the token leaves the address', async () => {
    const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(system.url(), method, path, opts);
    const admin = (await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    const org = await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'Initech', slug: `initech-${randomUUID().slice(0, 8)}` } });
    expect(org.status).toBe(201);
    const email = uniqueEmail('invitee');
    const password = strongPassword();
    const invitee = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ina', lastName: 'Vitee', email, password } });
    expect(invitee.status).toBe(201);
    expect((await call('POST', `/api/v1/organizations/${org.json.id}/invitations`, { token: admin, body: { email, roles: [] } })).status).toBe(201);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && /\/account\?invitation=/.test(m.text));
    const link = /(https?:\/\/\S+\/account\?invitation=[A-Za-z0-9_%.~-]+)/.exec(mail.text)![1]!;

    await page.goto(link);
    const account = new AccountPage(page);
    await account.heading().waitFor();
    // The token is out of the address (and so of the history, logs and Referer) before sign-in.
    expect(page.url()).not.toContain('invitation=');
    await account.signIn(email, password);
    const invitation = page.getByRole('region', { name: 'You are invited to an organization' });
    await invitation.waitFor();
    await page.screenshot({ path: join(OUT, 'invited.png'), fullPage: true });
    await invitation.getByRole('button', { name: 'Join the organization' }).click();
    await page.getByText('You joined the organization.').waitFor();
    await page.screenshot({ path: join(OUT, 'joined.png'), fullPage: true });

    const members = await call('GET', `/api/v1/organizations/${org.json.id}/members`, { token: admin });
    expect(members.status).toBe(200);
    expect(JSON.stringify(members.json)).toContain(invitee.json.id);
    // Reloaded, the page offers nothing again: the token was used and is gone from this tab.
    await page.reload();
    await account.section('Sessions').waitFor();
    expect(await page.getByRole('region', { name: 'You are invited to an organization' }).count()).toBe(0);
    expect(cspViolations).toEqual([]);
  });
});
