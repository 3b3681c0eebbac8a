/**
 * Each page of the provider renders to static HTML with the one stylesheet, no inline style or
 * script, its strings from the catalogue, every value of a request escaped, and its links.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { messages as t } from '../messages';
import { renderPage } from '../server';
import { ChangePasswordPage } from './change-password';
import { ConsentPage } from './consent';
import { UserCodeConfirmPage, UserCodeInputPage } from './device';
import { EnrolPage } from './enrol';
import { FactorPage } from './factor';
import { LogoutPage } from './logout';
import { MessagePage } from './message';
import { RESET_PASSWORD_PATH, SIGN_IN_PATH } from './paths';
import { ProveAccountPage } from './prove-account';
import { SignInPage } from './sign-in';

const HOSTILE = '<script>alert(1)</script>"\'&';
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;&amp;';
const prefix = '/oidc';
const policy = { minLength: 12, maxLength: 128, rules: [{ id: 'lower', label: 'A lowercase letter', pattern: '\\p{Ll}' }] };
/** Whether some `<tag …>` of the page carries all of `attrs` (React orders attributes its own way). */
const hasTag = (html: string, tag: string, attrs: Record<string, string>): boolean =>
  [...html.matchAll(new RegExp(`<${tag}\\s[^>]*>`, 'g'))].some(([m]) => Object.entries(attrs).every(([k, v]) => m.includes(` ${k}="${v}"`)));
const libraryForm = (id: string) => `<form id="${id}" method="post" action="/oidc/x"><input type="hidden" name="xsrf" value="x1"/></form>`;

/** Each page, rendered with a hostile value wherever a request or a client puts one. */
const pages: Record<string, () => string> = {
  'sign-in': () =>
    renderPage(SignInPage, { prefix, action: '/oidc/interaction/u/login', passkeyAction: '/oidc/interaction/u/passkey', clientName: HOSTILE, email: HOSTILE, error: HOSTILE, providers: [{ displayName: HOSTILE, href: '/oidc/interaction/u/federation/g' }] }),
  factor: () => renderPage(FactorPage, { prefix, action: '/oidc/interaction/u/factor', methods: ['totp', 'webauthn', 'recovery_code'], error: HOSTILE }),
  enrol: () => renderPage(EnrolPage, { prefix, action: '/oidc/interaction/u/factor', secret: 'JBSWY3DPEHPK3PXP', otpauthUri: `otpauth://totp/IAM:${encodeURIComponent(HOSTILE)}?secret=JBSWY3DPEHPK3PXP`, error: HOSTILE }),
  consent: () => renderPage(ConsentPage, { prefix, action: '/oidc/interaction/u/consent', clientName: HOSTILE, scopes: ['openid', 'email', HOSTILE], apiPermissions: [{ name: 'orders.read', description: HOSTILE }] }),
  logout: () => renderPage(LogoutPage, { prefix, form: libraryForm('op.logoutForm'), clientName: HOSTILE }),
  'device input': () => renderPage(UserCodeInputPage, { prefix, form: libraryForm('op.deviceInputForm'), error: HOSTILE }),
  'device confirm': () => renderPage(UserCodeConfirmPage, { prefix, form: libraryForm('op.deviceConfirmForm'), clientName: HOSTILE, userCode: HOSTILE }),
  message: () => renderPage(MessagePage, { prefix, title: t.signInErrors.title, message: HOSTILE, link: { href: '/oidc/interaction/u', text: t.federation.backToSignIn } }),
  'prove account': () => renderPage(ProveAccountPage, { prefix, action: '/oidc/interaction/u/federation-link', providerName: HOSTILE, error: HOSTILE }),
  'change password': () => renderPage(ChangePasswordPage, { prefix, action: '/oidc/interaction/u/password', policy, error: HOSTILE }),
};

describe.each(Object.entries(pages))('the %s page', (_name, render) => {
  const html = render();

  it('is one document with the one stylesheet and the brand', () => {
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html).toContain('<link rel="stylesheet" href="/oidc/assets/op.css"/>');
    expect(html).toContain(`<span class="brand">${t.brand}</span>`);
  });

  it('has no inline style and no inline script', () => {
    expect(html).not.toMatch(/\sstyle=|<style|<script>|<script(?![^>]*\ssrc=)|\son[a-z]+=/i);
  });

  it('escapes what a request or a client names', () => {
    expect(html).not.toContain('<script>alert(1)');
    if (!['factor', 'enrol', 'logout', 'device input'].includes(_name)) expect(html).toContain(ESCAPED);
  });
});

describe('the pages lead to each other, and keep their forms', () => {
  it('sign-in links to the reset request, and posts email and password to its action', () => {
    const html = pages['sign-in']!();
    expect(html).toContain(`<a href="${RESET_PASSWORD_PATH}">${t.signIn.forgotPassword}</a>`);
    expect(hasTag(html, 'form', { action: '/oidc/interaction/u/login', method: 'post' })).toBe(true);
    expect(html).toMatch(/<input id="email"[^>]* name="email" value="&lt;script&gt;/);
    expect(html).toMatch(/<input id="password"[^>]* name="password"\/>/);
    expect(html).toContain('<form data-webauthn-options="/oidc/interaction/u/passkey/options" data-autofill=""');
    expect(html).toContain('href="/oidc/interaction/u/federation/g"');
  });

  it('the sign-in prefills a login_hint and focuses the password then; without one, the email', () => {
    const hinted = renderPage(SignInPage, { prefix, action: '/a', clientName: 'App', email: 'ada@example.com' });
    expect(hinted).toMatch(/name="email" value="ada@example.com"/);
    expect(hinted).toMatch(/<input id="password"[^>]* autofocus=""/);
    expect(renderPage(SignInPage, { prefix, action: '/a', clientName: 'App' })).toMatch(/<input id="email"[^>]* autofocus=""/);
  });

  it('the factor page: a code, a passkey and a recovery code, each its own form to the factor step', () => {
    const html = pages.factor!();
    expect(html).toMatch(/name="code"/);
    expect(html).toMatch(/name="recoveryCode"/);
    expect(html).toContain('data-webauthn-options="/oidc/interaction/u/factor/options"');
    expect(html).toContain('<script src="/oidc/assets/signin.js" defer=""></script>');
    expect(renderPage(FactorPage, { prefix, action: '/f', methods: ['totp'] })).not.toContain('<script');
  });

  it('the enrolment page: its QR code labelled, its key grouped, a passkey registration', () => {
    const html = pages.enrol!();
    expect(html).toContain(`role="img" aria-label="${t.enrol.qrLabel}"`);
    expect(html).toContain('<code id="totp-secret">JBSW Y3DP EHPK 3PXP</code>');
    expect(html).toContain('data-register=""');
    expect(html).toContain('name="registration"');
  });

  it('consent: the scopes in words, the API permissions, allow and deny', () => {
    const html = pages.consent!();
    expect(html).toContain(t.consent.scopes.email);
    expect(html).toContain('<strong>orders.read</strong>');
    expect(hasTag(html, 'button', { type: 'submit', name: 'decision', value: 'allow' })).toBe(true);
    expect(hasTag(html, 'button', { type: 'submit', name: 'decision', value: 'deny' })).toBe(true);
  });

  it("the library's forms are placed as given, and the buttons name them", () => {
    expect(pages.logout!()).toContain(`${libraryForm('op.logoutForm')}</div>`);
    expect(hasTag(pages.logout!(), 'button', { form: 'op.logoutForm', value: 'yes', name: 'logout' })).toBe(true);
    expect(hasTag(pages['device confirm']!(), 'button', { form: 'op.deviceConfirmForm', value: 'yes', name: 'abort' })).toBe(true);
    expect(hasTag(pages['device input']!(), 'button', { form: 'op.deviceInputForm' })).toBe(true);
  });

  it('a message page leads back when given a link', () => {
    expect(pages.message!()).toContain(`<a href="/oidc/interaction/u">${t.federation.backToSignIn}</a>`);
  });

  it('change password: the new password to its action, and the policy listed', () => {
    const html = pages['change password']!();
    expect(html).toMatch(/<input id="new-password"[^>]* name="newPassword"/);
    expect(html).toContain('<li>At least 12 characters</li>');
    expect(html).toContain('<li>A lowercase letter</li>');
  });

  it('a finished reset leads to sign-in (the console page: the same path)', () => {
    expect(SIGN_IN_PATH).toBe('/account');
  });

  it('the stylesheet styles the pages and holds no import of another origin', () => {
    const css = readFileSync(join(__dirname, '..', '..', 'styles.css'), 'utf8');
    expect(css).toContain('main.signin');
    expect(css).not.toMatch(/@import|url\(/);
  });
});
