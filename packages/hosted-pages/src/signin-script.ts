/**
 * The one script of the hosted pages (served by identity at SIGNIN_SCRIPT_PATH, same origin, with
 * @simplewebauthn/browser's bundle): every form works without it; it only adds passkeys.
 */

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
