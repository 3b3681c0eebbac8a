/**
 * The hosted pages the browser renders (the console's build mounts them): reset and verification.
 * Their own entry (`@iam/hosted-pages/browser`), typed against the DOM; the provider's pages and
 * the shared parts are the package's main entry.
 */
export { type ActionOutcome, HostedPage } from './hosted-page';
export { type ResetPasswordApi, type ResetPasswordPageProps, ResetPasswordPage } from './reset-password';
export { type VerifyEmailPageProps, VerifyEmailPage } from './verify-email';
