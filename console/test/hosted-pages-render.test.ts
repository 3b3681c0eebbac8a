/**
 * The hosted pages the console mounts (@iam/hosted-pages/browser), rendered once as they first
 * appear: the one frame and catalogue, no inline style, the links between pages (the request
 * back to sign-in), and nothing called before the person acts. Their walks: mailbox.e2e.test.ts.
 */
import { RESET_PASSWORD_PATH, SIGN_IN_PATH, messages as t } from '@iam/hosted-pages';
import { type ActionOutcome, ResetPasswordPage, VerifyEmailPage } from '@iam/hosted-pages/browser';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { passwordPolicy } from '../src/api/limits.generated';

describe('the hosted pages the console mounts', () => {
  const calls: string[] = [];
  const call = (name: string) => async (): Promise<ActionOutcome> => (calls.push(name), { ok: true });
  const api = { request: call('request'), confirm: call('confirm') };
  const pages = {
    request: renderToStaticMarkup(createElement(ResetPasswordPage, { token: undefined, api, policy: passwordPolicy })),
    reset: renderToStaticMarkup(createElement(ResetPasswordPage, { token: 't'.repeat(43), api, policy: passwordPolicy })),
    verify: renderToStaticMarkup(createElement(VerifyEmailPage, { token: 't'.repeat(43), confirm: call('verify') })),
    noToken: renderToStaticMarkup(createElement(VerifyEmailPage, { token: undefined, confirm: call('verify') })),
  };

  it('each: the brand bar and one heading, no inline style, nothing called yet', () => {
    for (const html of Object.values(pages)) {
      expect(html).toContain(`<span class="brand">${t.brand}</span>`);
      expect(html.match(/<h1/g)).toHaveLength(1);
      expect(html).not.toMatch(/\sstyle=|<style|<script/);
    }
    expect(calls).toEqual([]);
  });

  it('the request leads back to sign-in; the reset lists the policy; the verification asks first', () => {
    expect(pages.request).toContain(`<a href="${SIGN_IN_PATH}">${t.resetPassword.backToSignIn}</a>`);
    expect(pages.request).toContain(`>${t.resetPassword.requestTitle}</h1>`);
    expect(pages.reset).toContain(t.resetPassword.policyTitle);
    expect(pages.reset).toContain(t.resetPassword.atLeast(passwordPolicy.minLength));
    expect(pages.verify).toContain(`>${t.verifyEmail.submit}</button>`);
    expect(pages.noToken).toContain(t.links.noToken(t.links.verificationEmail));
    expect(RESET_PASSWORD_PATH).toBe('/reset-password');
  });
});
