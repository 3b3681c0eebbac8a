/**
 * /reset-password?token=…: choose a new password, the policy checked as you type, posted to
 * `POST /api/v1/auth/password-reset/confirm`. A used, expired or broken token gets one message
 * that says nothing of the account.
 */
import { type FormEvent, useId, useState } from 'react';
import { ProblemError, fieldErrors } from '../api/problem';
import { confirmPasswordReset } from './api';
import { HostedPage, LINK_NOT_VALID, NoToken, isTokenRefusal, mount, problemText } from './layout';
import { passwordMaxLength, policyChecks } from './password-policy';
import { takeToken } from './token';

type State = { kind: 'form' } | { kind: 'done' } | { kind: 'link-not-valid' };

function ResetPassword() {
  const [token] = useState(takeToken);
  const [password, setPassword] = useState('');
  const [show, setShow] = useState(false);
  const [busy, setBusy] = useState(false);
  const [state, setState] = useState<State>({ kind: 'form' });
  const [error, setError] = useState<string>();
  const [fieldError, setFieldError] = useState<string>();
  const id = useId();
  const checks = policyChecks(password);
  const unmet = checks.filter((c) => !c.met).length;

  if (!token) return <HostedPage title="Choose a new password"><NoToken what="a password-reset email" /></HostedPage>;
  if (state.kind === 'done') {
    return (
      <HostedPage title="Your password is changed">
        <p role="status" className="notice">Your new password is set, and every device that was signed in has been signed out.</p>
        <p><a href="/console">Sign in</a> with your new password.</p>
      </HostedPage>
    );
  }
  if (state.kind === 'link-not-valid') {
    return (
      <HostedPage title="This link cannot be used">
        <div role="alert" className="problem"><p>{LINK_NOT_VALID}</p></div>
      </HostedPage>
    );
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setFieldError(undefined);
    if (unmet > 0) {
      setFieldError(`The password does not meet ${unmet === 1 ? 'one requirement' : `${unmet} requirements`} yet (listed below).`);
      return;
    }
    setBusy(true);
    try {
      await confirmPasswordReset(token, password);
      setPassword('');
      setState({ kind: 'done' });
    } catch (err) {
      if (isTokenRefusal(err)) setState({ kind: 'link-not-valid' });
      else if (err instanceof ProblemError && fieldErrors(err).newPassword) setFieldError(`The password ${fieldErrors(err).newPassword}.`);
      else setError(problemText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <HostedPage title="Choose a new password">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <div className="field">
          <label htmlFor={`${id}-password`}>New password</label>
          <input
            id={`${id}-password`}
            name="newPassword"
            type={show ? 'text' : 'password'}
            autoComplete="new-password"
            required
            maxLength={passwordMaxLength}
            value={password}
            aria-invalid={fieldError ? true : undefined}
            aria-describedby={`${id}-policy${fieldError ? ` ${id}-error` : ''}`}
            onChange={(e) => setPassword(e.target.value)}
          />
          <span id={`${id}-error`} className="field-error" aria-live="assertive">{fieldError ?? ''}</span>
        </div>
        <label className="check">
          <input type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} /> Show the password
        </label>
        <div id={`${id}-policy`} className="policy">
          <p id={`${id}-policy-title`}>Your password needs:</p>
          <ul aria-labelledby={`${id}-policy-title`}>
            {checks.map((c) => (
              <li key={c.id} className={c.met ? 'met' : 'unmet'}>
                <span aria-hidden="true">{c.met ? '✓' : '○'} </span>
                {c.label}
                <span className="visually-hidden">{c.met ? ' (done)' : ' (not yet)'}</span>
              </li>
            ))}
          </ul>
        </div>
        {/* Announced when it changes: how many requirements are left, not every keystroke's detail. */}
        <p className="visually-hidden" aria-live="polite">{password ? (unmet === 0 ? 'Every requirement is met.' : `${unmet} of ${checks.length} requirements left.`) : ''}</p>
        <div aria-live="assertive">{error ? <div role="alert" className="problem"><p>{error}</p></div> : null}</div>
        <button type="submit" disabled={busy}>{busy ? 'Saving…' : 'Set the new password'}</button>
      </form>
    </HostedPage>
  );
}

mount(<ResetPassword />);
