/** The console's Identity providers page, as an administrator uses it (page object of federation.e2e.test.ts). */
import type { Page } from 'playwright-core';
import type { ConsoleApp } from './pages';

export interface NewProvider {
  readonly name: string;
  readonly displayName: string;
  readonly discoveryUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly trustEmailVerified?: boolean;
  readonly allowSignUp?: boolean;
}

export class IdentityProvidersPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  async open(): Promise<void> {
    await this.app.go('Identity providers');
    await this.page.getByRole('heading', { name: 'Identity providers', level: 1 }).waitFor();
  }
  /** Fills "New identity provider" (an OpenID Connect one) and adds it. */
  async add(p: NewProvider): Promise<void> {
    const form = this.page.getByRole('region', { name: 'New identity provider' });
    await form.getByLabel('Kind').selectOption('oidc');
    await form.getByLabel(/^Short name/).fill(p.name);
    await form.getByLabel(/^Button text/).fill(p.displayName);
    await form.getByLabel(/^Discovery URL/).fill(p.discoveryUrl);
    await form.getByLabel(/^Client id/).fill(p.clientId);
    await form.getByLabel('Client secret', { exact: true }).fill(p.clientSecret);
    await form.getByLabel('Believe its “email verified”').setChecked(p.trustEmailVerified ?? false);
    await form.getByLabel('Make an account for a new user').setChecked(p.allowSignUp ?? false);
    await form.getByRole('button', { name: 'Add identity provider' }).click();
  }
  row(displayName: string) {
    return this.page.getByRole('row').filter({ has: this.page.getByRole('link', { name: displayName, exact: true }) });
  }
}
