import { useState } from 'react';
import { auth } from '../api/resources';
import { startSession } from '../auth/session';
import { Form } from '../components/ui';
import { SIGN_IN_FIELDS } from '../forms';

/** Wrong and locked logins get the same message (the API answers both alike; so do we). */
export function SignIn({ reason }: { reason?: string }) {
  const [error, setError] = useState<unknown>();
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
