/**
 * The provider's hosted pages (sign-in, second factor, enrolment, consent, sign-out, device code,
 * errors) as server-rendered HTML: no inline script (passkeys use two same-origin scripts:
 * @simplewebauthn/browser's bundle and SIGNIN_SCRIPT below; without them every form still works),
 * no inline style: the hosted pages' one stylesheet, strings and QR code come from their home,
 * packages/hosted-pages. Labelled fields, errors in a role="alert" region tied to the fields by
 * aria-describedby. Every value is escaped. Served with a strict CSP, never framed, no referrer.
 */
import { readFileSync } from 'node:fs';
import { messages as t, qrSvg } from '@iam/hosted-pages';

export const STYLESHEET_PATH = '/assets/op.css';
export const WEBAUTHN_SCRIPT_PATH = '/assets/webauthn.js';
export const SIGNIN_SCRIPT_PATH = '/assets/signin.js';

/**
 * The passkey ceremonies of the hosted pages, over @simplewebauthn/browser (window.SimpleWebAuthnBrowser).
 * A form with data-webauthn-options (a same-origin URL answering the request options) gets its
 * passkey button shown; the button (or, on the sign-in page, the browser's autofill: conditional
 * UI) runs the ceremony and submits the form with the credential's JSON in its "response" field.
 */
export const SIGNIN_SCRIPT = `(function () {
  'use strict';
  var W = window.SimpleWebAuthnBrowser;
  var form = document.querySelector('form[data-webauthn-options]');
  if (!form || !W || !W.browserSupportsWebAuthn()) return;
  var status = document.getElementById('passkey-status');
  var failed = status ? status.getAttribute('data-failed') : '';
  var button = form.querySelector('button[data-passkey]');
  var say = function (m) { if (status) status.textContent = m; };
  var register = form.hasAttribute('data-register');
  var run = function (autofill) {
    return fetch(form.getAttribute('data-webauthn-options'), { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' })
      .then(function (r) { if (!r.ok) throw new Error('options ' + r.status); return r.json(); })
      .then(function (options) { return register ? W.startRegistration({ optionsJSON: options }) : W.startAuthentication({ optionsJSON: options, useBrowserAutofill: autofill }); })
      .then(function (credential) { form.elements.namedItem(register ? 'registration' : 'response').value = JSON.stringify(credential); form.submit(); });
  };
  if (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      say('');
      run(false).catch(function (e) { if (e && e.name !== 'AbortError') say(failed); });
    });
  }
  if (form.hasAttribute('data-autofill') && W.browserSupportsWebAuthnAutofill) {
    W.browserSupportsWebAuthnAutofill().then(function (ok) { if (ok) run(true).catch(function () {}); });
  }
})();
`;

/** The hosted pages' stylesheet (packages/hosted-pages/styles.css), served at STYLESHEET_PATH. */
export const STYLESHEET = readFileSync(require.resolve('@iam/hosted-pages/styles.css'), 'utf8');

/** Where the sign-in page's "Forgot your password?" leads: the hosted reset page (its request form without a token). */
export const RESET_PASSWORD_PATH = '/reset-password';

/**
 * The origin a form post's redirects may go on to, as a CSP source: `scheme://host[:port]` of an
 * http(s) URI, or the scheme of a native app's (`com.example.app:`). Nothing else: a value that
 * does not parse, or would not be one clean source expression, is left out (never a way to add
 * directives to the header).
 */
export function formTarget(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') return /^https?:\/\/[A-Za-z0-9.-]+(?::\d+)?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](?::\d+)?$/.test(u.origin) ? u.origin : undefined;
  return /^[a-z][a-z0-9+.-]*:$/.test(u.protocol) && !['javascript:', 'data:', 'blob:', 'file:', 'filesystem:'].includes(u.protocol) ? u.protocol : undefined;
}

/**
 * Headers of every page: nothing but our stylesheet and scripts load, no framing, no referrer.
 * Forms post to this origin only; `formTargets` are the URIs this interaction may end at (its
 * request's redirect URI, a logout's post-logout redirect URI, both already checked against the
 * client's registration by the provider): Chromium applies form-action to every redirect that
 * follows a form post (the sign-in → /oidc/auth/:uid → the app's redirect URI), so their origins
 * are allowed too, and no other.
 */
export function pageHeaders(_prefix: string, formTargets: readonly string[] = []): Record<string, string> {
  const targets = [...new Set(formTargets.map(formTarget).filter((t): t is string => t !== undefined))];
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // A source list takes origins, not paths ('/oidc/assets/op.css' alone is dropped as invalid,
    // which refused the stylesheet): this origin's stylesheets and scripts (the pages link only
    // ours: the stylesheet, @simplewebauthn/browser's bundle and signin.js).
    'content-security-policy': `default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action ${["'self'", ...targets].join(' ')}; base-uri 'none'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

export function esc(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A page: `body` is trusted HTML made by the functions below (every value in it escaped). */
export function layout(prefix: string, title: string, body: string, opts: { scripts?: boolean } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}${esc(t.titleSuffix)}</title>
<link rel="stylesheet" href="${esc(prefix + STYLESHEET_PATH)}">
${opts.scripts ? `<script src="${esc(prefix + WEBAUTHN_SCRIPT_PATH)}" defer></script>\n<script src="${esc(prefix + SIGNIN_SCRIPT_PATH)}" defer></script>` : ''}
</head>
<body>
<header><span class="brand">${esc(t.brand)}</span></header>
<main id="main" class="signin">
${body}
</main>
</body>
</html>`;
}

function problem(id: string, message: string | undefined): string {
  // Announced when the page loads with it (role="alert"); the fields point at it.
  return message ? `<div class="problem" id="${id}" role="alert"><p>${esc(message)}</p></div>` : '';
}

/**
 * The sign-in page: email and password, and a passkey (the button, or the browser's autofill on
 * the email field: conditional UI), which posts to `passkeyAction`.
 */
/** An enabled upstream identity provider's button: a link to `href` (a navigation, not a form post). */
export interface ProviderLink {
  readonly displayName: string;
  readonly href: string;
}

export function signInPage(p: { prefix: string; action: string; passkeyAction?: string; clientName: string; email?: string; error?: string; providers?: readonly ProviderLink[] }): string {
  const invalid = p.error ? ' aria-invalid="true" aria-describedby="signin-error"' : '';
  const passkey = p.passkeyAction
    ? `<form method="post" action="${esc(p.passkeyAction)}" data-webauthn-options="${esc(p.passkeyAction)}/options" data-autofill>
<input type="hidden" name="response" value="">
<div class="actions"><button type="button" class="secondary" data-passkey hidden>${esc(t.signIn.passkey)}</button></div>
<p id="passkey-status" role="status" data-failed="${esc(t.signIn.passkeyFailed)}"></p>
</form>`
    : '';
  return layout(
    p.prefix,
    t.signIn.title,
    `<h1>${esc(t.signIn.title)}</h1>
<p>${esc(t.signIn.continueTo)} <strong>${esc(p.clientName)}</strong></p>
${problem('signin-error', p.error)}
<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="email">${esc(t.signIn.email)}</label><input id="email" name="email" type="email" autocomplete="username webauthn" required value="${esc(p.email ?? '')}"${invalid}${p.email ? '' : ' autofocus'}></div>
<div class="field"><label for="password">${esc(t.signIn.password)}</label><input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${p.email ? ' autofocus' : ''}></div>
<div class="actions"><button type="submit">${esc(t.signIn.submit)}</button></div>
</form>
<p><a href="${esc(RESET_PASSWORD_PATH)}">${esc(t.signIn.forgotPassword)}</a></p>
${passkey}${
      p.providers?.length
        ? `\n<nav aria-label="${esc(t.signIn.otherWays)}" class="providers">\n${p.providers.map((x) => `<p class="actions"><a class="button secondary" href="${esc(x.href)}">${esc(t.signIn.withProvider)} ${esc(x.displayName)}</a></p>`).join('\n')}\n</nav>`
        : ''
    }`,
    { scripts: p.passkeyAction !== undefined },
  );
}

/** The second step: a code of the authenticator app, a passkey, or a recovery code (the methods the account has). */
export function factorPage(p: { prefix: string; action: string; methods: readonly string[]; error?: string }): string {
  const invalid = p.error ? ' aria-invalid="true" aria-describedby="factor-error"' : '';
  const totp = p.methods.includes('totp')
    ? `<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="code">${esc(t.factor.code)}</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus${invalid}></div>
<div class="actions"><button type="submit">${esc(t.factor.submit)}</button></div>
</form>`
    : '';
  const passkey = p.methods.includes('webauthn')
    ? `<form method="post" action="${esc(p.action)}" data-webauthn-options="${esc(p.action)}/options">
<input type="hidden" name="response" value="">
<div class="actions"><button type="button" data-passkey hidden>${esc(t.factor.passkey)}</button></div>
<p id="passkey-status" role="status" data-failed="${esc(t.signIn.passkeyFailed)}"></p>
</form>`
    : '';
  const recovery = p.methods.includes('recovery_code')
    ? `<details>
<summary>${esc(t.factor.recoverySummary)}</summary>
<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="recovery">${esc(t.factor.recoveryCode)}</label><input id="recovery" name="recoveryCode" autocomplete="off" spellcheck="false" required${invalid}></div>
<div class="actions"><button type="submit" class="secondary">${esc(t.factor.recoverySubmit)}</button></div>
</form>
</details>`
    : '';
  return layout(
    p.prefix,
    t.factor.title,
    `<h1>${esc(t.factor.heading)}</h1>
${problem('factor-error', p.error)}
${totp}
${passkey}
${recovery}`,
    { scripts: p.methods.includes('webauthn') },
  );
}

export { qrSvg };

/** Enrolment a policy requires (MFA_REQUIRED_ROLES, or acr_values asking for mfa): an authenticator app, activated by its first code. */
export function enrolPage(p: { prefix: string; action: string; secret: string; otpauthUri: string; error?: string }): string {
  const invalid = p.error ? ' aria-invalid="true" aria-describedby="factor-error"' : '';
  return layout(
    p.prefix,
    t.enrol.title,
    `<h1>${esc(t.enrol.title)}</h1>
<p>${esc(t.enrol.intro)}</p>
${problem('factor-error', p.error)}
<figure>${qrSvg(p.otpauthUri, t.enrol.qrLabel)}<figcaption>${esc(t.enrol.key)} <code id="totp-secret">${esc(p.secret.replace(/(.{4})/g, '$1 ').trim())}</code></figcaption></figure>
<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="code">${esc(t.factor.code)}</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus${invalid}></div>
<div class="actions"><button type="submit">${esc(t.enrol.submit)}</button></div>
</form>
<form method="post" action="${esc(p.action)}" data-webauthn-options="${esc(p.action)}/register-options" data-register>
<input type="hidden" name="registration" value="">
<p>${esc(t.enrol.passkeyIntro)}</p>
<div class="actions"><button type="button" class="secondary" data-passkey hidden>${esc(t.enrol.passkey)}</button></div>
<p id="passkey-status" role="status" data-failed="${esc(t.signIn.passkeyFailed)}"></p>
</form>`,
    { scripts: true },
  );
}

/**
 * The consent page: the OpenID scopes asked, in words, and each API permission the app asks to
 * use on the user's behalf (its name and description), under its own heading.
 */
export function consentPage(p: { prefix: string; action: string; clientName: string; scopes: readonly string[]; apiPermissions?: ReadonlyArray<{ name: string; description: string }> }): string {
  const items = p.scopes.map((s) => `<li>${esc(t.consent.scopes[s] ?? s)}</li>`).join('\n');
  const api = p.apiPermissions ?? [];
  const apiItems = api.map((x) => `<li><strong>${esc(x.name)}</strong>${x.description ? `: ${esc(x.description)}` : ''}</li>`).join('\n');
  const apiSection = api.length
    ? `
<h2 id="api-permissions">${esc(t.consent.apiHeading)}</h2>
<p>${esc(t.consent.apiIntro)}</p>
<ul aria-labelledby="api-permissions">
${apiItems}
</ul>`
    : '';
  return layout(
    p.prefix,
    t.consent.title,
    `<h1>${esc(t.consent.title)}</h1>
<p><strong>${esc(p.clientName)}</strong> ${esc(t.consent.asks)}</p>
<ul>
${items}
</ul>${apiSection}
<form method="post" action="${esc(p.action)}">
<div class="actions">
<button type="submit" name="decision" value="allow">${esc(t.consent.allow)}</button>
<button type="submit" name="decision" value="deny" class="secondary">${esc(t.consent.deny)}</button>
</div>
</form>`,
  );
}

export function logoutPage(p: { prefix: string; form: string; clientName?: string }): string {
  return layout(
    p.prefix,
    t.logout.title,
    `<h1>${esc(t.logout.title)}</h1>
<p>${esc(t.logout.ask)}${p.clientName ? ` ${esc(t.logout.ofClient)} <strong>${esc(p.clientName)}</strong> ${esc(t.logout.and)}` : ''} ${esc(t.logout.ofProvider)}</p>
${p.form}
<div class="actions">
<button type="submit" form="op.logoutForm" value="yes" name="logout">${esc(t.logout.confirm)}</button>
<button type="submit" form="op.logoutForm" class="secondary">${esc(t.logout.stay)}</button>
</div>`,
  );
}

export function messagePage(prefix: string, title: string, message: string): string {
  return layout(prefix, title, `<h1>${esc(title)}</h1>\n<p>${esc(message)}</p>`);
}

export function userCodeInputPage(p: { prefix: string; form: string; error?: string }): string {
  // The provider's form holds a hidden xsrf field and the `user_code` input we label here.
  return layout(
    p.prefix,
    t.device.inputTitle,
    `<h1>${esc(t.device.inputTitle)}</h1>
<p id="code-help">${esc(t.device.inputHelp)}</p>
${problem('code-error', p.error)}
${p.form}
<div class="actions"><button type="submit" form="op.deviceInputForm">${esc(t.device.continue)}</button></div>`,
  );
}

export function userCodeConfirmPage(p: { prefix: string; form: string; clientName: string; userCode: string }): string {
  return layout(
    p.prefix,
    t.device.confirmTitle,
    `<h1>${esc(t.device.confirmTitle)}</h1>
<p><strong>${esc(p.clientName)}</strong> ${esc(t.device.confirmAsks)}</p>
<p><code class="user-code">${esc(p.userCode)}</code></p>
${p.form}
<div class="actions">
<button type="submit" form="op.deviceConfirmForm">${esc(t.device.continue)}</button>
<button type="submit" form="op.deviceConfirmForm" value="yes" name="abort" class="secondary">${esc(t.device.cancel)}</button>
</div>`,
  );
}
