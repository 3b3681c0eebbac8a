/** Page objects of the console's browser tests: what a user sees and does, not how the DOM is built. */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { type AxeViolation, axeOf } from './browser';

export class ConsoleApp {
  readonly shots: string[] = [];
  constructor(
    readonly page: Page,
    readonly baseUrl: string,
    readonly outDir: string,
  ) {}

  async open(path = ''): Promise<void> {
    await this.page.goto(`${this.baseUrl}/console${path}`);
  }

  heading() {
    return this.page.getByRole('heading', { level: 1 });
  }

  /** axe-core on the current page: the serious and critical violations. */
  async axe(): Promise<AxeViolation[]> {
    return axeOf(this.page);
  }

  async screenshot(name: string): Promise<string> {
    const path = join(this.outDir, `${String(this.shots.length + 1).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path, fullPage: true });
    this.shots.push(path);
    return path;
  }

  async go(link: 'Users' | 'Roles' | 'Permissions' | 'Products' | 'Clients' | 'Identity providers' | 'Webhooks' | 'Organizations' | 'Audit' | 'My account'): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
  }

  /** The sections the main nav offers. */
  async sections(): Promise<string[]> {
    return this.page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
  }

  /** A URL typed or bookmarked within the session (the app routes it without a reload, which would sign out). */
  async goDirect(path: string): Promise<void> {
    await this.page.evaluate((to) => {
      history.pushState(null, '', `/console${to}`);
      dispatchEvent(new PopStateEvent('popstate'));
    }, path);
  }

  /** Waits until the fields of these labels are empty (a create form starts over once its call succeeded). */
  async emptied(...labels: string[]): Promise<void> {
    for (const label of labels) {
      const input = await this.page.getByLabel(label).elementHandle();
      await this.page.waitForFunction((el) => (el as HTMLInputElement).value === '', input);
    }
  }

  /** How wide the page is laid out (more than the viewport: the page scrolls sideways). */
  async layoutWidth(): Promise<number> {
    return this.page.evaluate(() => document.documentElement.scrollWidth);
  }

  /** The console's "Sign out", then the OpenID provider's confirmation (RP-initiated logout); back on the console's sign-in page. */
  async signOut(): Promise<void> {
    await this.page.getByRole('button', { name: 'Sign out' }).click();
    await this.page.getByRole('heading', { name: 'Sign out', level: 1 }).waitFor();
    await this.page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await this.page.getByRole('heading', { name: 'Sign in to the IAM console' }).waitFor();
  }

  alert() {
    return this.page.getByRole('alert');
  }

  status() {
    return this.page.getByRole('status');
  }
}

/**
 * Signing in, now through the OpenID provider: the console's (or the account page's) "Sign in"
 * button, then the OP's own sign-in page (email, password), which brings the browser back.
 */
export class SignInPage {
  constructor(readonly app: ConsoleApp) {}
  /** From the console's "Sign in" page: opens the OP's page (skipped when it is already open). */
  async openProvider(): Promise<void> {
    const p = this.app.page;
    const op = p.getByRole('heading', { name: 'Sign in', exact: true, level: 1 });
    if (await op.isVisible()) return;
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await op.waitFor();
  }
  /** The OP's form; it answers a wrong password on its own page (role="alert"). */
  async submit(email: string, password: string): Promise<void> {
    const p = this.app.page;
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
  }
  async signIn(email: string, password: string): Promise<void> {
    await this.openProvider();
    await this.submit(email, password);
  }
  /** The OP's refusal on its page. */
  error() {
    return this.app.page.getByRole('alert');
  }
}

export class UsersPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  async search(q: string): Promise<void> {
    await this.page.getByLabel('Search users').fill(q);
  }
  async showDeleted(on: boolean): Promise<void> {
    await this.page.getByLabel('Show deleted').setChecked(on);
  }
  /** A sortable column head (its button), by the head's label. */
  sortHead(label: string) {
    return this.page.getByRole('button', { name: label, exact: true });
  }
  /** `aria-sort` of the column head with this label (null when the list is not ordered by it). */
  async ariaSort(label: string): Promise<string | null> {
    return this.page.getByRole('columnheader', { name: label }).getAttribute('aria-sort');
  }
  /** Waits until the table shows the rows of the list's current query (not the previous one's). */
  async settled(): Promise<void> {
    await this.page.locator('table[aria-busy="false"]').waitFor();
  }
  /** The text of one column, top to bottom. */
  async column(n: number): Promise<string[]> {
    return this.page.locator(`tbody tr td:nth-child(${n})`).allTextContents();
  }
  row(text: string) {
    return this.page.getByRole('row').filter({ hasText: text });
  }
  createButton() {
    return this.page.getByRole('link', { name: 'Create user' });
  }
  async create(u: { firstName: string; lastName: string; email: string; phone?: string; password: string; roles: string[] }): Promise<void> {
    await this.createButton().click();
    await this.page.getByLabel('First name').fill(u.firstName);
    await this.page.getByLabel('Last name').fill(u.lastName);
    await this.page.getByLabel('Email').fill(u.email);
    if (u.phone !== undefined) await this.page.getByLabel('Phone').fill(u.phone);
    await this.page.getByLabel('Password').fill(u.password);
    for (const r of u.roles) await this.page.getByRole('checkbox', { name: r, exact: true }).check();
    await this.page.getByRole('button', { name: 'Create' }).click();
  }
  async edit(name: string, changes: { lastName: string; phone?: string }): Promise<void> {
    await this.row(name).getByRole('link').click();
    await this.page.getByLabel('Last name').fill(changes.lastName);
    if (changes.phone !== undefined) await this.page.getByLabel('Phone').fill(changes.phone);
    await this.page.getByRole('button', { name: 'Save' }).click();
  }
  async perPage(n: number): Promise<void> {
    await this.page.getByLabel('Per page').selectOption(String(n));
  }
  async remove(email: string): Promise<void> {
    await this.page.getByRole('button', { name: `Delete ${email}` }).click();
    await this.page.getByRole('button', { name: `Confirm delete of ${email}` }).click();
  }
  async resetPassword(email: string): Promise<void> {
    await this.page.getByRole('button', { name: `Reset password for ${email}` }).click();
  }
}

export class RolesPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  async search(q: string): Promise<void> {
    await this.page.getByLabel('Search roles').fill(q);
  }
  async create(name: string, description = ''): Promise<void> {
    await this.page.getByLabel('Role name').fill(name);
    await this.page.getByLabel('Description').fill(description);
    await this.page.getByRole('button', { name: 'Create role' }).click();
  }
  row(text: string) {
    return this.page.getByRole('row').filter({ hasText: text });
  }
  /** On a role's page. */
  async rename(name: string, description: string): Promise<void> {
    const details = this.page.getByRole('region', { name: 'Name and description' });
    await details.getByLabel('Role name').fill(name);
    await details.getByLabel('Description').fill(description);
    await details.getByRole('button', { name: 'Save' }).click();
  }
  /** On a role's page. */
  async remove(name: string): Promise<void> {
    await this.page.getByRole('button', { name: `Delete role ${name}` }).click();
    await this.page.getByRole('button', { name: `Confirm delete of role ${name}` }).click();
  }
  async open(name: string): Promise<void> {
    await this.page.getByRole('link', { name, exact: true }).click();
  }
  granted() {
    return this.page.getByRole('region', { name: 'Permissions of this role' }).getByRole('listitem');
  }
  async grant(permission: string): Promise<void> {
    await this.page.getByLabel('Permission', { exact: true }).selectOption({ label: permission });
    await this.page.getByRole('button', { name: 'Grant' }).click();
  }
  async revoke(permission: string): Promise<void> {
    await this.page.getByRole('button', { name: `Revoke ${permission}` }).click();
    await this.page.getByRole('button', { name: `Confirm revoke of ${permission}` }).click();
  }
}

export class ProductsPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  async search(q: string): Promise<void> {
    await this.page.getByLabel('Search products').fill(q);
  }
  row(text: string) {
    return this.page.getByRole('row').filter({ hasText: text });
  }
  createButton() {
    return this.page.getByRole('link', { name: 'Create product' });
  }
  async create(p: { sku: string; name: string; priceMinor: string; currency: string; onHand: string }): Promise<void> {
    await this.createButton().click();
    await this.page.getByLabel('SKU').fill(p.sku);
    await this.page.getByLabel('Name').fill(p.name);
    await this.page.getByLabel('Price in minor units').fill(p.priceMinor);
    await this.page.getByLabel('Currency').fill(p.currency);
    await this.page.getByLabel('Units on hand').fill(p.onHand);
    await this.page.getByRole('button', { name: 'Create' }).click();
  }
  async rename(name: string): Promise<void> {
    await this.page.getByLabel('Name').fill(name);
    await this.page.getByRole('button', { name: 'Save' }).click();
  }
  async adjustStock(delta: string): Promise<void> {
    await this.page.getByLabel('Change in units on hand').fill(delta);
    await this.page.getByRole('button', { name: 'Adjust stock' }).click();
  }
  async archive(sku: string): Promise<void> {
    await this.page.getByRole('button', { name: `Archive ${sku}` }).click();
    await this.page.getByRole('button', { name: `Confirm archive of ${sku}` }).click();
  }
}

export class AuditTrailPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  /** Filters by action prefix until a row with `text` shows (entries arrive through the bus). */
  async find(action: string, text: string): Promise<void> {
    await this.page.getByLabel('Action starts with').fill(action);
    for (let i = 0; ; i++) {
      await this.page.getByRole('button', { name: 'Filter' }).click();
      try {
        await this.page.getByRole('row').filter({ hasText: text }).first().waitFor({ timeout: 1_000 });
        return;
      } catch (err) {
        if (i >= 15) throw err;
      }
    }
  }
  async verify(): Promise<void> {
    await this.page.getByRole('button', { name: 'Verify the hash chain' }).click();
  }
  /** A row's user agent: the short form, opened to show the full string. */
  async userAgent(row: string): Promise<{ short: string; full: string }> {
    const details = this.page.getByRole('row').filter({ hasText: row }).first().locator('details');
    const short = (await details.locator('summary').textContent()) ?? '';
    await details.locator('summary').click();
    return { short, full: (await details.locator('small').textContent()) ?? '' };
  }
}

/** The development mailbox (make run without SMTP_URL): the list and one mail. */
export class MailboxPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  async open(): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailbox (development)' }).click();
  }
  /** Opens the newest mail to `to` with this subject, refreshing until it has arrived. */
  async read(to: string, subject: string): Promise<void> {
    const row = this.page.getByRole('row').filter({ hasText: to }).filter({ hasText: subject }).first();
    const deadline = Date.now() + 20_000;
    while (!(await row.isVisible())) {
      if (Date.now() > deadline) throw new Error(`no mail "${subject}" to ${to} in the mailbox`);
      await this.page.getByRole('button', { name: 'Refresh' }).click();
      await this.page.waitForTimeout(250);
    }
    await row.getByRole('link', { name: subject }).click();
    await this.page.getByRole('heading', { level: 1, name: subject }).waitFor();
  }
  /** The mail's link to a hosted page, as shown under "Links in this mail". */
  link(path: '/reset-password' | '/verify-email') {
    return this.page.getByRole('region', { name: 'Links in this mail' }).getByRole('link').filter({ hasText: `${path}?token=` }).first();
  }
  /** Follows a link of the mail: it opens in a new tab (this one keeps the console's session). */
  async follow(path: '/reset-password' | '/verify-email'): Promise<Page> {
    const opened = this.page.context().waitForEvent('page');
    await this.link(path).click();
    const tab = await opened;
    tab.setDefaultTimeout(10_000);
    await tab.waitForLoadState();
    return tab;
  }
}
