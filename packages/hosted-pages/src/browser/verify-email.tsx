/**
 * The verification page (`/verify-email?token=…`): confirms the address only when the person
 * presses "Verify" (a mail scanner or link prefetcher that opens the link changes nothing). The
 * call is the caller's (the console's API client).
 */
import { useState } from 'react';
import { messages as t } from '../messages';
import { type ActionOutcome, Announced, Finished, HostedPage, LinkNotValid, NoToken } from './hosted-page';

export interface VerifyEmailPageProps {
  readonly token: string | undefined;
  confirm(token: string): Promise<ActionOutcome>;
}

export function VerifyEmailPage({ token, confirm }: VerifyEmailPageProps) {
  const [state, setState] = useState<'ask' | 'busy' | 'done' | 'link-not-valid'>('ask');
  const [error, setError] = useState<string>();

  if (!token) {
    return (
      <HostedPage title={t.verifyEmail.title}>
        <NoToken what={t.links.verificationEmail} />
      </HostedPage>
    );
  }
  if (state === 'done') return <Finished title={t.verifyEmail.doneTitle} text={t.verifyEmail.done} />;
  if (state === 'link-not-valid') return <LinkNotValid />;
  const verify = async () => {
    setError(undefined);
    setState('busy');
    const r = await confirm(token);
    if (r.ok) return setState('done');
    if (r.kind === 'link-not-valid') return setState('link-not-valid');
    setError(r.kind === 'problem' ? r.text : r.message);
    setState('ask');
  };
  return (
    <HostedPage title={t.verifyEmail.title}>
      <p>{t.verifyEmail.intro}</p>
      <Announced text={error} />
      <button type="button" disabled={state === 'busy'} onClick={() => void verify()}>
        {state === 'busy' ? t.verifyEmail.busy : t.verifyEmail.submit}
      </button>
    </HostedPage>
  );
}
