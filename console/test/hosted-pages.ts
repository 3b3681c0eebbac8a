/**
 * Page objects of the hosted pages (reset, verification, account): what a user sees and does, not
 * how the DOM is built. The console's own pages: pages.ts.
 */
import type { Page } from 'playwright-core';

/** The hosted reset page (/reset-password?token=…). */
export class ResetPasswordPage {
  constructor(readonly page: Page) {}
  heading() {
    return this.page.getByRole('heading', { level: 1 });
  }
  async type(password: string): Promise<void> {
    await this.page.getByLabel('New password').fill(password);
  }
  /** The policy's checklist: each requirement's text with "(done)" or "(not yet)". */
  async checklist(): Promise<string[]> {
    return (await this.page.getByRole('list', { name: 'Your password needs:' }).getByRole('listitem').allTextContents()).map((t) => t.replace(/^[✓○]\s*/, ''));
  }
  async submit(): Promise<void> {
    await this.page.getByRole('button', { name: 'Set the new password' }).click();
  }
}

/** The hosted verification page (/verify-email?token=…). */
export class VerifyEmailPage {
  constructor(readonly page: Page) {}
  heading() {
    return this.page.getByRole('heading', { level: 1 });
  }
  async verify(): Promise<void> {
    await this.page.getByRole('button', { name: 'Verify' }).click();
  }
}

/**
 * The hosted account page (/account), in any tab: it signs in through the OpenID provider (its
 * "Sign in", then the OP's page) and shows one region per section.
 */
export class AccountPage {
  constructor(readonly page: Page) {}
  heading() {
    return this.page.getByRole('heading', { level: 1 });
  }
  /** From the signed-out page: the OP's sign-in, then back here. */
  async signIn(email: string, password: string): Promise<void> {
    await this.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await this.page.getByRole('heading', { name: 'Sign in', exact: true, level: 1 }).waitFor();
    await this.page.getByLabel('Email').fill(email);
    await this.page.getByLabel('Password').fill(password);
    await this.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await this.section('Sessions').waitFor();
  }
  section(title: string) {
    return this.page.getByRole('region', { name: title, exact: true });
  }
  async saveNames(first: string, last: string): Promise<void> {
    const s = this.section('Profile');
    await s.getByLabel('First name').fill(first);
    await s.getByLabel('Last name').fill(last);
    await s.getByRole('button', { name: 'Save names' }).click();
  }
  async changePassword(current: string, next: string): Promise<void> {
    const s = this.section('Password');
    await s.getByLabel('Current password').fill(current);
    await s.getByLabel('New password').fill(next);
    await s.getByRole('button', { name: 'Change password' }).click();
  }
  async changeEmail(email: string, current: string): Promise<void> {
    const s = this.section('Email address');
    await s.getByLabel('New email address').fill(email);
    await s.getByLabel('Current password').fill(current);
    await s.getByRole('button', { name: 'Change email address' }).click();
  }
  /** "Other sign-ins": "Link {provider}" (a fresh sign-in here comes first: the OP's page, then the provider). */
  async startLink(provider: string): Promise<void> {
    await this.section('Other sign-ins').getByRole('button', { name: `Link ${provider}` }).click();
  }
  /** The rows of the linked sign-ins (without the table's head). */
  linkedSignIns() {
    return this.section('Other sign-ins').getByRole('row').filter({ has: this.page.getByRole('cell') });
  }
  async unlink(provider: string): Promise<void> {
    const s = this.section('Other sign-ins');
    await s.getByRole('button', { name: `Unlink ${provider}` }).click();
    await s.getByRole('button', { name: `Unlink ${provider}` }).click();
  }
  /** The rows of the sessions table (without its head). */
  sessions() {
    return this.section('Sessions').getByRole('row').filter({ has: this.page.getByRole('cell') });
  }
}
