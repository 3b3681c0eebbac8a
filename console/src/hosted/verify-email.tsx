/**
 * /verify-email?token=…: confirms the address only when the person presses "Verify" (a mail
 * scanner or link prefetcher that opens the link changes nothing), through
 * `POST /api/v1/auth/email-verification/confirm`.
 */
import { messages as t } from '@iam/hosted-pages';
import { useState } from 'react';
import { confirmEmailVerification } from './api';
import { HostedPage, LINK_NOT_VALID, NoToken, isTokenRefusal, mount, problemText } from './layout';
import { takeToken } from './token';

type State = 'ask' | 'busy' | 'done' | 'link-not-valid';

function VerifyEmail() {
  const [token] = useState(takeToken);
  const [state, setState] = useState<State>('ask');
  const [error, setError] = useState<string>();

  if (!token) return <HostedPage title={t.verifyEmail.title}><NoToken what={t.links.verificationEmail} /></HostedPage>;
  if (state === 'done') {
    return (
      <HostedPage title={t.verifyEmail.doneTitle}>
        <p role="status" className="notice">{t.verifyEmail.done}</p>
      </HostedPage>
    );
  }
  if (state === 'link-not-valid') {
    return (
      <HostedPage title={t.links.notValidTitle}>
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
    <HostedPage title={t.verifyEmail.title}>
      <p>{t.verifyEmail.intro}</p>
      <div aria-live="assertive">{error ? <div role="alert" className="problem"><p>{error}</p></div> : null}</div>
      <button type="button" disabled={state === 'busy'} onClick={() => void verify()}>{state === 'busy' ? t.verifyEmail.busy : t.verifyEmail.submit}</button>
    </HostedPage>
  );
}

mount(<VerifyEmail />);
