/** The console's Webhooks pages, as a person uses them (page object of webhooks.e2e.test.ts). */
import type { Page } from 'playwright-core';
import type { ConsoleApp } from './pages';

export class WebhooksPage {
  constructor(readonly app: ConsoleApp) {}
  get page(): Page {
    return this.app.page;
  }
  async open(): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await this.page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  }
  /** Registers an endpoint for these types; returns the secret shown once. */
  async register(url: string, description: string, types: string[]): Promise<string> {
    const form = this.page.getByRole('region', { name: 'New endpoint' });
    await form.getByLabel('URL').fill(url);
    await form.getByLabel('Description').fill(description);
    for (const t of types) await form.getByRole('checkbox', { name: t, exact: true }).check();
    await form.getByRole('button', { name: 'Register endpoint' }).click();
    const secret = this.page.getByLabel('Signing secret', { exact: true });
    await secret.waitFor();
    return (await secret.textContent()) ?? '';
  }
  row(url: string) {
    return this.page.getByRole('row').filter({ hasText: url });
  }
  async openEndpoint(url: string): Promise<void> {
    await this.page.getByRole('link', { name: url }).click();
    await this.page.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor();
  }
  async sendTest(): Promise<string> {
    await this.page.getByRole('button', { name: 'Send test message' }).click();
    const notice = this.app.status().filter({ hasText: /Test message msg_[0-9a-f]{32} queued\./ });
    await notice.waitFor();
    return /msg_[0-9a-f]{32}/.exec((await notice.textContent()) ?? '')![0];
  }
  /** The attempts table's row of a message (it refreshes every 5 s). */
  attempt(messageId: string) {
    return this.page.getByRole('region', { name: 'Attempts' }).getByRole('row').filter({ hasText: messageId });
  }
  message(messageId: string) {
    return this.page.getByRole('region', { name: 'Messages' }).getByRole('row').filter({ hasText: messageId });
  }
  async replay(messageId: string): Promise<void> {
    await this.page.getByRole('button', { name: `Replay ${messageId}` }).click();
    await this.app.status().filter({ hasText: `Message ${messageId} queued again.` }).waitFor();
  }
  async replayRange(): Promise<string> {
    await this.page.getByRole('button', { name: 'Replay failed messages' }).click();
    const notice = this.app.status().filter({ hasText: /queued again/ });
    await notice.waitFor();
    return (await notice.textContent()) ?? '';
  }
  async rotate(): Promise<string> {
    await this.page.getByRole('button', { name: 'Rotate secret' }).click();
    await this.page.getByRole('button', { name: 'Confirm new secret' }).click();
    const secret = this.page.getByLabel('Signing secret', { exact: true });
    await secret.waitFor();
    return (await secret.textContent()) ?? '';
  }
}
