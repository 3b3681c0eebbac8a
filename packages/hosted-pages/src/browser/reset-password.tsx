/**
 * The reset page (`/reset-password?token=…`): choose a new password, the policy checked as you
 * type. A used, expired or broken token gets one message that says nothing of the account.
 * Without a token (the sign-in page's "Forgot your password?"), the request: an email address,
 * answered alike whether or not an account has it. A finished reset, and the request, link to
 * sign-in. The calls are the caller's (`ResetPasswordApi`: the console's API client).
 */
import { type FormEvent, useId, useState } from 'react';
import { messages as t } from '../messages';
import { type PasswordPolicy, policyChecks } from '../password-policy';
import { RESET_PASSWORD_PATH, SIGN_IN_PATH } from '../pages/paths';
import { PolicyHints } from '../pages/policy-hints';
import { type ActionOutcome, Announced, Finished, HostedPage, LinkNotValid } from './hosted-page';

export interface ResetPasswordApi {
  /** The reset link for an address (the same answer whether or not an account has it). */
  request(email: string): Promise<ActionOutcome>;
  confirm(token: string, newPassword: string): Promise<ActionOutcome>;
}

export interface ResetPasswordPageProps {
  /** The link's token, taken from the address (absent: the request form). */
  readonly token: string | undefined;
  readonly api: ResetPasswordApi;
  readonly policy: PasswordPolicy;
}

/** No token: ask for the link. The answer is the same whether or not an account has the address. */
function RequestReset({ api }: { api: ResetPasswordApi }) {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string>();
  const id = useId();
  if (sent) {
    return (
      <Finished title={t.resetPassword.requestedTitle} text={t.resetPassword.requested}>
        <p>
          <a href={SIGN_IN_PATH}>{t.resetPassword.backToSignIn}</a>
        </p>
      </Finished>
    );
  }
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    const r = await api.request(email.trim());
    setBusy(false);
    if (r.ok) setSent(true);
    else setError(r.kind === 'problem' ? r.text : r.kind === 'field' ? r.message : t.problems.generic);
  };
  return (
    <HostedPage title={t.resetPassword.requestTitle}>
      <p>{t.resetPassword.requestIntro}</p>
      <form onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor={`${id}-email`}>{t.resetPassword.email}</label>
          <input id={`${id}-email`} name="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <Announced text={error} />
        <button type="submit" disabled={busy}>
          {busy ? t.resetPassword.sending : t.resetPassword.requestSubmit}
        </button>
      </form>
      <p>
        <a href={SIGN_IN_PATH}>{t.resetPassword.backToSignIn}</a>
      </p>
    </HostedPage>
  );
}

function ChooseNewPassword({ token, api, policy }: { token: string; api: ResetPasswordApi; policy: PasswordPolicy }) {
  const [password, setPassword] = useState('');
  const [show, setShow] = useState(false);
  const [busy, setBusy] = useState(false);
  const [state, setState] = useState<'form' | 'done' | 'link-not-valid'>('form');
  const [error, setError] = useState<string>();
  const [fieldError, setFieldError] = useState<string>();
  const id = useId();
  const checks = policyChecks(policy, password, t.resetPassword.atLeast);
  const unmet = checks.filter((c) => !c.met).length;

  if (state === 'done') {
    return (
      <Finished title={t.resetPassword.doneTitle} text={t.resetPassword.done}>
        <p>
          <a href={SIGN_IN_PATH}>{t.resetPassword.signInAgain}</a>
          {t.resetPassword.signInAgainAfter}
        </p>
      </Finished>
    );
  }
  if (state === 'link-not-valid') {
    return (
      <LinkNotValid>
        <p>
          <a href={RESET_PASSWORD_PATH}>{t.resetPassword.requestTitle}</a>
        </p>
      </LinkNotValid>
    );
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setFieldError(undefined);
    if (unmet > 0) return setFieldError(t.resetPassword.unmet(unmet));
    setBusy(true);
    const r = await api.confirm(token, password);
    setBusy(false);
    if (r.ok) {
      setPassword('');
      setState('done');
    } else if (r.kind === 'link-not-valid') setState('link-not-valid');
    else if (r.kind === 'field') setFieldError(t.resetPassword.refused(r.message));
    else setError(r.text);
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
            maxLength={policy.maxLength}
            value={password}
            aria-invalid={fieldError ? true : undefined}
            aria-describedby={`${id}-policy${fieldError ? ` ${id}-error` : ''}`}
            onChange={(e) => setPassword(e.target.value)}
          />
          <span id={`${id}-error`} className="field-error" aria-live="assertive">
            {fieldError ?? ''}
          </span>
        </div>
        <label className="check">
          <input type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} /> {t.resetPassword.show}
        </label>
        <PolicyHints id={`${id}-policy`} checks={checks} marks />
        {/* Announced when it changes: how many requirements are left, not every keystroke's detail. */}
        <p className="visually-hidden" aria-live="polite">
          {password ? (unmet === 0 ? t.resetPassword.allMet : t.resetPassword.left(unmet, checks.length)) : ''}
        </p>
        <Announced text={error} />
        <button type="submit" disabled={busy}>
          {busy ? t.resetPassword.saving : t.resetPassword.submit}
        </button>
      </form>
    </HostedPage>
  );
}

export function ResetPasswordPage({ token, api, policy }: ResetPasswordPageProps) {
  return token ? <ChooseNewPassword token={token} api={api} policy={policy} /> : <RequestReset api={api} />;
}
