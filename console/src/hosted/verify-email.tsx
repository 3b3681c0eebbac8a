/**
 * /verify-email?token=…: confirms the address only when the person presses "Verify" (a mail
 * scanner or link prefetcher that opens the link changes nothing), through
 * `POST /api/v1/auth/email-verification/confirm`.
 */
import { useState } from 'react';
import { confirmEmailVerification } from './api';
import { HostedPage, LINK_NOT_VALID, NoToken, isTokenRefusal, mount, problemText } from './layout';
import { takeToken } from './token';

type State = 'ask' | 'busy' | 'done' | 'link-not-valid';

function VerifyEmail() {
  const [token] = useState(takeToken);
  const [state, setState] = useState<State>('ask');
  const [error, setError] = useState<string>();

  if (!token) return <HostedPage title="Confirm your email address"><NoToken what="a verification email" /></HostedPage>;
  if (state === 'done') {
    return (
      <HostedPage title="Your email address is confirmed">
        <p role="status" className="notice">Thank you: your email address is confirmed. You can close this page.</p>
      </HostedPage>
    );
  }
  if (state === 'link-not-valid') {
    return (
      <HostedPage title="This link cannot be used">
        <div role="alert" className="problem"><p>{LINK_NOT_VALID}</p></div>
      </HostedPage>
    );
  }
  const verify = async () => {
    setError(undefined);
    setState('busy');
    try {
      await confirmEmailVerification(token);
      setState('done');
    } catch (err) {
      if (isTokenRefusal(err)) {
        setState('link-not-valid');
        return;
      }
      setError(problemText(err));
      setState('ask');
    }
  };
  return (
    <HostedPage title="Confirm your email address">
      <p>Press the button to confirm that this email address is yours.</p>
      <div aria-live="assertive">{error ? <div role="alert" className="problem"><p>{error}</p></div> : null}</div>
      <button type="button" disabled={state === 'busy'} onClick={() => void verify()}>{state === 'busy' ? 'Verifying…' : 'Verify'}</button>
    </HostedPage>
  );
}

mount(<VerifyEmail />);
