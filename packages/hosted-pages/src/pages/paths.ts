/**
 * The addresses the hosted pages link to and load, in one place: the provider's assets (under its
 * prefix, `/oidc`), and the pages that link to each other (sign-in → reset request, a finished
 * reset → sign-in).
 */

/** The one stylesheet (styles.css), served by identity under the provider's prefix. */
export const STYLESHEET_PATH = '/assets/op.css';
/** @simplewebauthn/browser's bundle, under the provider's prefix (the passkey pages only). */
export const WEBAUTHN_SCRIPT_PATH = '/assets/webauthn.js';
/** The passkey ceremonies of the pages (signin-script.ts), under the provider's prefix. */
export const SIGNIN_SCRIPT_PATH = '/assets/signin.js';

/** Where "Forgot your password?" leads: the hosted reset page (its request form without a token). */
export const RESET_PASSWORD_PATH = '/reset-password';
/**
 * Where a finished reset's "Sign in" leads: the account page, which signs in through the
 * provider's page (a sign-in left for a mail cannot be resumed: its interaction is short-lived).
 */
export const SIGN_IN_PATH = '/account';
