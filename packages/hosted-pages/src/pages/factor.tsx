/**
 * The second step: a code of the authenticator app, a passkey, or a recovery code (the methods the
 * account has), each its own form posting to the factor step.
 */
import { messages as t } from '../messages';
import { Document, Problem, invalidIf } from './frame';
import { PasskeyForm } from './passkey-form';

export interface FactorPageProps {
  readonly prefix: string;
  readonly action: string;
  readonly methods: readonly string[];
  readonly error?: string;
}

/** The authenticator app's 6-digit code (the factor and the enrolment pages). */
export function CodeField({ error }: { error: string | undefined }) {
  return (
    <div className="field">
      <label htmlFor="code">{t.factor.code}</label>
      <input id="code" name="code" inputMode="numeric" pattern="[0-9]{6}" maxLength={6} autoComplete="one-time-code" required autoFocus {...invalidIf('factor-error', error)} />
    </div>
  );
}

export function FactorPage(p: FactorPageProps) {
  const has = (m: string) => p.methods.includes(m);
  return (
    <Document prefix={p.prefix} title={t.factor.title} scripts={has('webauthn')}>
      <h1>{t.factor.heading}</h1>
      <Problem id="factor-error" message={p.error} />
      {has('totp') ? (
        <form method="post" action={p.action} noValidate>
          <CodeField error={p.error} />
          <div className="actions">
            <button type="submit">{t.factor.submit}</button>
          </div>
        </form>
      ) : null}
      {has('webauthn') ? <PasskeyForm action={p.action} options={`${p.action}/options`} label={t.factor.passkey} /> : null}
      {has('recovery_code') ? (
        <details>
          <summary>{t.factor.recoverySummary}</summary>
          <form method="post" action={p.action} noValidate>
            <div className="field">
              <label htmlFor="recovery">{t.factor.recoveryCode}</label>
              <input id="recovery" name="recoveryCode" autoComplete="off" spellCheck={false} required {...invalidIf('factor-error', p.error)} />
            </div>
            <div className="actions">
              <button type="submit" className="secondary">
                {t.factor.recoverySubmit}
              </button>
            </div>
          </form>
        </details>
      ) : null}
    </Document>
  );
}
