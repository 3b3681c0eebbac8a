import { useState } from 'react';
import { ProblemError } from '../api/problem';
import { auth } from '../api/resources';
import { startSession } from '../auth/session';
import { Form } from '../components/ui';
import { MFA_CODE_FIELDS, MFA_RECOVERY_FIELDS, SIGN_IN_FIELDS } from '../forms';

/** The right password of an account with a second factor (DESIGN §5): what the 401 carries. */
interface Challenge {
  mfaToken: string;
  enrol: boolean;
  /** Enrolment: the authenticator app's secret, once asked for. */
  secret?: string;
  otpauthUri?: string;
}

function challengeOf(e: unknown): Challenge | undefined {
  if (!(e instanceof ProblemError)) return undefined;
  const p: { type: string; mfaToken?: unknown } = e.problem;
  const enrol = p.type === 'urn:iam:problem:mfa-enrolment-required';
  if ((p.type !== 'urn:iam:problem:mfa-required' && !enrol) || typeof p.mfaToken !== 'string') return undefined;
  return { mfaToken: p.mfaToken, enrol };
}

/** Wrong and locked logins get the same message (the API answers both alike; so do we). */
export function SignIn({ reason }: { reason?: string }) {
  const [error, setError] = useState<unknown>();
  const [challenge, setChallenge] = useState<Challenge>();
  const factor = async (f: { code: string } | { recoveryCode: string }) => {
    setError(undefined);
    try {
      startSession(await auth.completeMfa(challenge!.mfaToken, f));
    } catch (e) {
      setError((e as { status?: number }).status === 401 ? new Error('The code is not correct, or it was used already. Sign in again if this keeps happening.') : e);
      throw e;
    }
  };
  if (challenge) {
    return (
      <main id="main" className="signin">
        <h1 tabIndex={-1}>{challenge.enrol ? 'Set up a second factor' : 'Second factor'}</h1>
        {challenge.enrol && !challenge.secret ? (
          <>
            <p>Your role requires an authenticator app. Add this account to one, then enter its code.</p>
            <button type="button" onClick={async () => { const en = await auth.enrol(challenge.mfaToken); setChallenge({ ...challenge, ...en }); }}>
              Show the secret
            </button>
          </>
        ) : null}
        {challenge.secret ? (
          <dl className="claims">
            <dt>Secret</dt><dd><code>{challenge.secret}</code></dd>
            <dt>Link</dt><dd><a href={challenge.otpauthUri}>Open in an authenticator app</a></dd>
          </dl>
        ) : null}
        <Form fields={MFA_CODE_FIELDS} submitLabel="Verify" error={error} onSubmit={(v) => factor({ code: v.code })} />
        {!challenge.enrol ? <Form fields={MFA_RECOVERY_FIELDS} submitLabel="Use recovery code" onSubmit={(v) => factor({ recoveryCode: v.recoveryCode })} /> : null}
      </main>
    );
  }
  return (
    <main id="main" className="signin">
      <h1 tabIndex={-1}>Sign in to the IAM console</h1>
      {reason ? <p role="status" className="notice">{reason}</p> : null}
      <Form
        fields={SIGN_IN_FIELDS}
        submitLabel="Sign in"
        error={error}
        onSubmit={async (v) => {
          setError(undefined);
          try {
            startSession(await auth.signIn(v.email, v.password));
          } catch (e) {
            const c = challengeOf(e);
            if (c) {
              setChallenge(c);
              return;
            }
            const status = (e as { status?: number }).status;
            setError(
              status === 401 || status === 403 || status === 423
                ? new Error('The email or password is not correct, or the account cannot sign in now.')
                : e,
            );
            throw e;
          }
        }}
      />
    </main>
  );
}
