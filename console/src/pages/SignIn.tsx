import { useState } from 'react';
import { redirectToSignIn } from '../auth/oidc';

/**
 * Shown with no session: the silent check found no OP session (or a sign-in failed, `reason`).
 * The button goes to the OpenID provider's sign-in page (password, then a second factor when the
 * account has one); the OP brings the person back here, to the page they opened.
 */
export function SignIn({ reason, redirectUri }: { reason?: string; redirectUri: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const go = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await redirectToSignIn(redirectUri, window.location.pathname + window.location.search, false);
    } catch {
      setBusy(false);
      setError('The sign-in service could not be reached. Try again in a moment.');
    }
  };
  return (
    <main id="main" className="signin">
      <h1 tabIndex={-1}>Sign in to the IAM console</h1>
      {reason ? <p role="status" className="notice">{reason}</p> : null}
      {error ? <div role="alert" className="problem"><p>{error}</p></div> : null}
      <p>You sign in on the platform&apos;s sign-in page, then come back here.</p>
      <button type="button" disabled={busy} onClick={() => void go()}>{busy ? 'Opening the sign-in page…' : 'Sign in'}</button>
    </main>
  );
}
