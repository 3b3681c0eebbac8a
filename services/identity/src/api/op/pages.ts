/**
 * The provider's hosted pages (sign-in, second factor, enrolment, consent, sign-out, device code,
 * errors) as server-rendered HTML: no inline script (passkeys use two same-origin scripts:
 * @simplewebauthn/browser's bundle and SIGNIN_SCRIPT below; without them every form still works),
 * one same-origin stylesheet with the console's look (console/src/styles.css
 * tokens), labelled fields, errors in a role="alert" region tied to the fields by
 * aria-describedby. Every value is escaped. Served with a strict CSP, never framed, no referrer.
 */
import qrcode from 'qrcode-generator';

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
      run(false).catch(function (e) { if (e && e.name !== 'AbortError') say('The passkey was not used. Try again or use another way.'); });
    });
  }
  if (form.hasAttribute('data-autofill') && W.browserSupportsWebAuthnAutofill) {
    W.browserSupportsWebAuthnAutofill().then(function (ok) { if (ok) run(true).catch(function () {}); });
  }
})();
`;

export const STYLESHEET = `:root { font-family: system-ui, sans-serif; color: #1a1a1a; background: #fff; line-height: 1.5; }
body { margin: 0; }
header { display: flex; gap: .5rem 1rem; align-items: center; padding: .5rem 1rem; background: #1f3a5f; color: #fff; }
.brand { font-weight: 700; }
main { max-width: 26rem; margin: 4rem auto; padding: 0 1rem; }
a { color: #0b4f9c; }
:focus-visible { outline: 3px solid #d35400; outline-offset: 2px; }
.field { display: flex; flex-direction: column; margin-bottom: .75rem; }
label { font-weight: 600; }
input, button { font: inherit; padding: .35rem .6rem; border: 1px solid #555; border-radius: 4px; max-width: 100%; box-sizing: border-box; }
button { background: #1f3a5f; color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: #1f3a5f; }
input[aria-invalid='true'] { border-color: #a61b1b; }
.problem { border: 2px solid #a61b1b; background: #fdecea; padding: .5rem 1rem; margin: 1rem 0; }
.problem p { margin: .25rem 0; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; }
code.user-code { font-size: 1.5rem; letter-spacing: .1em; }
@media (max-width: 40rem) { main { margin: 1.5rem auto; } }
`;

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
<title>${esc(title)} · IAM</title>
<link rel="stylesheet" href="${esc(prefix + STYLESHEET_PATH)}">
${opts.scripts ? `<script src="${esc(prefix + WEBAUTHN_SCRIPT_PATH)}" defer></script>\n<script src="${esc(prefix + SIGNIN_SCRIPT_PATH)}" defer></script>` : ''}
</head>
<body>
<header><span class="brand">IAM</span></header>
<main id="main">
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
<div class="actions"><button type="button" class="secondary" data-passkey hidden>Sign in with a passkey</button></div>
<p id="passkey-status" role="status"></p>
</form>`
    : '';
  return layout(
    p.prefix,
    'Sign in',
    `<h1>Sign in</h1>
<p>to continue to <strong>${esc(p.clientName)}</strong></p>
${problem('signin-error', p.error)}
<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username webauthn" required value="${esc(p.email ?? '')}"${invalid}${p.email ? '' : ' autofocus'}></div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${p.email ? ' autofocus' : ''}></div>
<div class="actions"><button type="submit">Sign in</button></div>
</form>
${passkey}${
      p.providers?.length
        ? `\n<nav aria-label="Other ways to sign in" class="providers">\n${p.providers.map((x) => `<p class="actions"><a class="button secondary" href="${esc(x.href)}">Sign in with ${esc(x.displayName)}</a></p>`).join('\n')}\n</nav>`
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
<div class="field"><label for="code">Code from your authenticator app</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus${invalid}></div>
<div class="actions"><button type="submit">Continue</button></div>
</form>`
    : '';
  const passkey = p.methods.includes('webauthn')
    ? `<form method="post" action="${esc(p.action)}" data-webauthn-options="${esc(p.action)}/options">
<input type="hidden" name="response" value="">
<div class="actions"><button type="button" data-passkey hidden>Use a passkey</button></div>
<p id="passkey-status" role="status"></p>
</form>`
    : '';
  const recovery = p.methods.includes('recovery_code')
    ? `<details>
<summary>Use a recovery code</summary>
<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="recovery">Recovery code</label><input id="recovery" name="recoveryCode" autocomplete="off" spellcheck="false" required${invalid}></div>
<div class="actions"><button type="submit" class="secondary">Use the recovery code</button></div>
</form>
</details>`
    : '';
  return layout(
    p.prefix,
    'Second factor',
    `<h1>Confirm it is you</h1>
${problem('factor-error', p.error)}
${totp}
${passkey}
${recovery}`,
    { scripts: p.methods.includes('webauthn') },
  );
}

/** A QR code of `text` as inline SVG (no script, no image request), labelled for assistive technology. */
export function qrSvg(text: string, label: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  let d = '';
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) d += `M${c + 4},${r + 4}h1v1h-1z`;
  const size = n + 8;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${size * 5}" height="${size * 5}" role="img" aria-label="${esc(label)}"><rect width="${size}" height="${size}" fill="#fff"/><path d="${d}" fill="#000"/></svg>`;
}

/** Enrolment a policy requires (MFA_REQUIRED_ROLES, or acr_values asking for mfa): an authenticator app, activated by its first code. */
export function enrolPage(p: { prefix: string; action: string; secret: string; otpauthUri: string; error?: string }): string {
  const invalid = p.error ? ' aria-invalid="true" aria-describedby="factor-error"' : '';
  return layout(
    p.prefix,
    'Set up a second factor',
    `<h1>Set up a second factor</h1>
<p>This account needs a second factor. Scan the code with an authenticator app, or enter the key by hand, then type the code the app shows.</p>
${problem('factor-error', p.error)}
<figure>${qrSvg(p.otpauthUri, 'QR code of the authenticator app key')}<figcaption>Key: <code id="totp-secret">${esc(p.secret.replace(/(.{4})/g, '$1 ').trim())}</code></figcaption></figure>
<form method="post" action="${esc(p.action)}" novalidate>
<div class="field"><label for="code">Code from your authenticator app</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus${invalid}></div>
<div class="actions"><button type="submit">Turn on and continue</button></div>
</form>
<form method="post" action="${esc(p.action)}" data-webauthn-options="${esc(p.action)}/register-options" data-register>
<input type="hidden" name="registration" value="">
<p>Or use a passkey: this device's screen lock or a security key.</p>
<div class="actions"><button type="button" class="secondary" data-passkey hidden>Use a passkey instead</button></div>
<p id="passkey-status" role="status"></p>
</form>`,
    { scripts: true },
  );
}

const SCOPE_TEXT: Record<string, string> = {
  openid: 'Know who you are (your account id)',
  profile: 'Your first and last name',
  email: 'Your email address and whether it is verified',
  offline_access: 'Stay signed in when you are away (a refresh token)',
};

/**
 * The consent page: the OpenID scopes asked, in words, and each API permission the app asks to
 * use on the user's behalf (its name and description), under its own heading.
 */
export function consentPage(p: { prefix: string; action: string; clientName: string; scopes: readonly string[]; apiPermissions?: ReadonlyArray<{ name: string; description: string }> }): string {
  const items = p.scopes.map((s) => `<li>${esc(SCOPE_TEXT[s] ?? s)}</li>`).join('\n');
  const api = p.apiPermissions ?? [];
  const apiItems = api.map((x) => `<li><strong>${esc(x.name)}</strong>${x.description ? `: ${esc(x.description)}` : ''}</li>`).join('\n');
  const apiSection = api.length
    ? `
<h2 id="api-permissions">Act for you at the API</h2>
<p>With these permissions, as you hold them:</p>
<ul aria-labelledby="api-permissions">
${apiItems}
</ul>`
    : '';
  return layout(
    p.prefix,
    'Allow access',
    `<h1>Allow access</h1>
<p><strong>${esc(p.clientName)}</strong> asks to:</p>
<ul>
${items}
</ul>${apiSection}
<form method="post" action="${esc(p.action)}">
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}

export function logoutPage(p: { prefix: string; form: string; clientName?: string }): string {
  return layout(
    p.prefix,
    'Sign out',
    `<h1>Sign out</h1>
<p>Do you want to sign out${p.clientName ? ` of <strong>${esc(p.clientName)}</strong> and` : ''} of this identity provider?</p>
${p.form}
<div class="actions">
<button type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>
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
    'Connect a device',
    `<h1>Connect a device</h1>
<p id="code-help">Enter the code your device shows.</p>
${problem('code-error', p.error)}
${p.form}
<div class="actions"><button type="submit" form="op.deviceInputForm">Continue</button></div>`,
  );
}

export function userCodeConfirmPage(p: { prefix: string; form: string; clientName: string; userCode: string }): string {
  return layout(
    p.prefix,
    'Confirm the device',
    `<h1>Confirm the device</h1>
<p><strong>${esc(p.clientName)}</strong> asks to sign in. Continue only if your device shows this code:</p>
<p><code class="user-code">${esc(p.userCode)}</code></p>
${p.form}
<div class="actions">
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" value="yes" name="abort" class="secondary">Cancel</button>
</div>`,
  );
}
