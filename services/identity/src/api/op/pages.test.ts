import { messages } from '@iam/hosted-pages';
import { RESET_PASSWORD_PATH, STYLESHEET, consentPage, enrolPage, factorPage, formTarget, logoutPage, messagePage, pageHeaders, signInPage } from './pages';

describe('hosted pages: form-action', () => {
  it('self alone when the interaction ends nowhere else (a device flow, an error page)', () => {
    expect(pageHeaders('/oidc')['content-security-policy']).toContain("form-action 'self';");
  });

  it("the origins of the interaction's redirect URIs, once each, and nothing of their paths or queries", () => {
    const csp = pageHeaders('/oidc', ['https://app.example.com/cb?x=1', 'https://app.example.com/other', 'http://127.0.0.2:8080/callback', 'com.example.app:/oauth'])['content-security-policy']!;
    expect(csp).toContain("form-action 'self' https://app.example.com http://127.0.0.2:8080 com.example.app:;");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('a value that could add to the policy, or a scheme that runs code, is left out', () => {
    for (const bad of ['https://a.example; script-src *', 'javascript:alert(1)', 'data:text/html,x', 'not a uri', "https://a.example/'unsafe-inline'"]) {
      const t = formTarget(bad);
      expect(t === undefined || /^https:\/\/a\.example$/.test(t)).toBe(true);
    }
    const csp = pageHeaders('/oidc', ['https://a.example; script-src *', 'javascript:alert(1)'])['content-security-policy']!;
    expect(csp.split(';').map((d) => d.trim().split(' ')[0])).toEqual(['default-src', 'style-src', 'script-src', 'connect-src', 'img-src', 'form-action', 'base-uri', 'frame-ancestors']);
    expect(csp).not.toContain('javascript');
    expect(csp).not.toContain('*');
  });
});

describe('hosted pages: one home', () => {
  const pages = [
    signInPage({ prefix: '/oidc', action: '/oidc/interaction/u/login', passkeyAction: '/oidc/interaction/u/passkey', clientName: 'App <1>' }),
    factorPage({ prefix: '/oidc', action: '/f', methods: ['totp', 'webauthn', 'recovery_code'] }),
    enrolPage({ prefix: '/oidc', action: '/f', secret: 'JBSWY3DPEHPK3PXP', otpauthUri: 'otpauth://totp/IAM:a?secret=JBSWY3DPEHPK3PXP' }),
    consentPage({ prefix: '/oidc', action: '/c', clientName: 'App', scopes: ['openid', 'email'], apiPermissions: [{ name: 'orders.read', description: 'Read orders' }] }),
    logoutPage({ prefix: '/oidc', form: '<form id="op.logoutForm"></form>', clientName: 'App' }),
    messagePage('/oidc', 'Sign-in failed', 'Start again.'),
  ];

  it('the sign-in page links to the reset request ("Forgot your password?")', () => {
    expect(pages[0]).toContain(`<a href="${RESET_PASSWORD_PATH}">${messages.signIn.forgotPassword}</a>`);
    expect(pages[0]).toContain('App &lt;1&gt;');
  });

  it('every page: the one stylesheet, no inline style or script, strings from the catalogue', () => {
    for (const html of pages) {
      expect(html).toContain('<link rel="stylesheet" href="/oidc/assets/op.css">');
      expect(html).not.toMatch(/\sstyle=|<style|<script>/);
      expect(html).toContain(`<span class="brand">${messages.brand}</span>`);
    }
    expect(pages[2]).toContain(`aria-label="${messages.enrol.qrLabel}"`);
    expect(pages[3]).toContain(messages.consent.scopes.email);
    expect(STYLESHEET).toContain('main.signin');
  });
});
