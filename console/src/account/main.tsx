/**
 * /account: the hosted account page (DESIGN §5), an entry of the console's build served by the
 * gateway with the hosted pages' headers. It signs in through the OpenID provider as the console
 * does (auth/oidc.ts, redirect URI `/account`): a silent check at load, "Sign in" when the OP has
 * no session, tokens in memory only.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { ProblemError } from '../api/problem';
import { type Start, redirectToSignIn, startFailure, startUp } from '../auth/oidc';
import { type Session, onSession, session } from '../auth/session';
import '@iam/hosted-pages/styles.css';
import '../styles.css';
import { ACCOUNT_URI, AccountPage } from './AccountPage';
import { takeFederationAnswerFromAddress } from './identities-api';
import { takeInvitationFromAddress } from './invitation';

takeInvitationFromAddress();
takeFederationAnswerFromAddress();

const client = new QueryClient({
  defaultOptions: { queries: { retry: (n, e) => n < 1 && !(e instanceof ProblemError && e.status < 500), staleTime: 5_000 } },
});

let starting: Promise<Start> | undefined;

function SignedOut({ message }: { message?: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => heading.current?.focus(), []);
  return (
    <>
      <header><span className="brand">IAM</span></header>
      <main id="main" className="signin">
        <h1 tabIndex={-1} ref={heading}>Your account</h1>
        {message ? <p role="status" className="notice">{message}</p> : null}
        <p>Sign in to see and change your profile, email address, password and sessions.</p>
        <button type="button" disabled={busy} onClick={() => { setBusy(true); void redirectToSignIn(ACCOUNT_URI, '/account', false).catch(() => setBusy(false)); }}>
          {busy ? 'Opening the sign-in page…' : 'Sign in'}
        </button>
      </main>
    </>
  );
}

function Account() {
  const [s, setS] = useState<Session | null>(session());
  const [start, setStart] = useState<Start>();
  const [reason, setReason] = useState<string>();
  useEffect(() => onSession((next, why) => { setS(next); setReason(why); if (!next) client.clear(); }), []);
  useEffect(() => {
    starting ??= startUp(ACCOUNT_URI).catch((err: unknown): Start => ({ kind: 'signed-out', message: startFailure(err, '/account') }));
    void starting.then(setStart);
  }, []);
  if (s) return <AccountPage />;
  if (!start || start.kind === 'redirecting') return <main id="main" className="signin"><p role="status">Signing in…</p></main>;
  return <SignedOut message={reason ?? (start.kind === 'signed-out' ? start.message : undefined)} />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}><Account /></QueryClientProvider>
  </StrictMode>,
);
