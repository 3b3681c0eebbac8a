/**
 * /reset-password?token=…: choose a new password, the policy checked as you type, posted to
 * `POST /api/v1/auth/password-reset/confirm`. A used, expired or broken token gets one message
 * that says nothing of the account. Without a token (the sign-in page's "Forgot your password?"),
 * the request: an email address posted to `POST /api/v1/auth/password-reset/request`, answered
 * alike whether or not an account has it. A finished reset, and the request, link to sign-in.
 */
import { PolicyHints, RESET_PASSWORD_PATH, SIGN_IN_PATH, messages as t } from '@iam/hosted-pages';
import { type FormEvent, useId, useState } from 'react';
import { ProblemError, fieldErrors } from '../api/problem';
import { confirmPasswordReset, requestPasswordReset } from './api';
import { HostedPage, LINK_NOT_VALID, isTokenRefusal, mount, problemText } from './layout';
import { passwordMaxLength, policyChecks } from './password-policy';
import { takeToken } from './token';

type State = { kind: 'form' } | { kind: 'done' } | { kind: 'link-not-valid' };

function SignInLink({ after = '' }: { after?: string }) {
  return <p><a href={SIGN_IN_PATH}>{t.resetPassword.signInAgain}</a>{after}</p>;
}

/** No token: ask for the link. The answer is the same whether or not an account has the address. */
function RequestReset() {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string>();
  const id = useId();
  if (sent) {
    return (
      <HostedPage title={t.resetPassword.requestedTitle}>
        <p role="status" className="notice">{t.resetPassword.requested}</p>
        <p><a href={SIGN_IN_PATH}>{t.resetPassword.backToSignIn}</a></p>
      </HostedPage>
    );
  }
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await requestPasswordReset(email.trim());
      setSent(true);
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <HostedPage title={t.resetPassword.requestTitle}>
      <p>{t.resetPassword.requestIntro}</p>
      <form onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor={`${id}-email`}>{t.resetPassword.email}</label>
          <input id={`${id}-email`} name="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div aria-live="assertive">{error ? <div role="alert" className="problem"><p>{error}</p></div> : null}</div>
        <button type="submit" disabled={busy}>{busy ? t.resetPassword.sending : t.resetPassword.requestSubmit}</button>
      </form>
      <p><a href={SIGN_IN_PATH}>{t.resetPassword.backToSignIn}</a></p>
    </HostedPage>
  );
}

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

  if (!token) return <RequestReset />;
  if (state.kind === 'done') {
    return (
      <HostedPage title={t.resetPassword.doneTitle}>
        <p role="status" className="notice">{t.resetPassword.done}</p>
        <SignInLink after={t.resetPassword.signInAgainAfter} />
      </HostedPage>
    );
  }
  if (state.kind === 'link-not-valid') {
    return (
      <HostedPage title={t.links.notValidTitle}>
        <div role="alert" className="problem"><p>{LINK_NOT_VALID}</p></div>
        <p><a href={RESET_PASSWORD_PATH}>{t.resetPassword.requestTitle}</a></p>
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
    <HostedPage title={t.resetPassword.title}>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <div className="field">
          <label htmlFor={`${id}-password`}>{t.resetPassword.newPassword}</label>
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
          <input type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} /> {t.resetPassword.show}
        </label>
        <PolicyHints id={`${id}-policy`} checks={checks} marks />
        {/* Announced when it changes: how many requirements are left, not every keystroke's detail. */}
        <p className="visually-hidden" aria-live="polite">{password ? (unmet === 0 ? 'Every requirement is met.' : `${unmet} of ${checks.length} requirements left.`) : ''}</p>
        <div aria-live="assertive">{error ? <div role="alert" className="problem"><p>{error}</p></div> : null}</div>
        <button type="submit" disabled={busy}>{busy ? t.resetPassword.saving : t.resetPassword.submit}</button>
      </form>
    </HostedPage>
  );
}

mount(<ResetPassword />);
