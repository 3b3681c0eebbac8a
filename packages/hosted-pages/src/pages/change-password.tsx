/**
 * A step of the sign-in (the flow's `password_change`): an account that must change its password
 * (imported with passwordChangeRequired) chooses a new one before the sign-in goes on. The
 * policy's requirements are listed (checked by the directory when it is set).
 */
import type { PasswordPolicy } from '../password-policy';
import { policyChecks } from '../password-policy';
import { messages as t } from '../messages';
import { Document, Problem, invalidIf } from './frame';
import { PolicyHints } from './policy-hints';

export interface ChangePasswordPageProps {
  readonly prefix: string;
  readonly action: string;
  readonly policy: PasswordPolicy;
  readonly error?: string;
}

export function ChangePasswordPage(p: ChangePasswordPageProps) {
  const describedBy = p.error ? 'password-policy password-error' : 'password-policy';
  return (
    <Document prefix={p.prefix} title={t.changePassword.title}>
      <h1>{t.changePassword.title}</h1>
      <p>{t.changePassword.intro}</p>
      <Problem id="password-error" message={p.error} />
      <form method="post" action={p.action} noValidate>
        <div className="field">
          <label htmlFor="new-password">{t.changePassword.newPassword}</label>
          <input
            id="new-password"
            name="newPassword"
            type="password"
            autoComplete="new-password"
            required
            maxLength={p.policy.maxLength}
            autoFocus
            {...invalidIf('password-error', p.error)}
            aria-describedby={describedBy}
          />
        </div>
        <PolicyHints id="password-policy" checks={policyChecks(p.policy, '', t.resetPassword.atLeast)} marks={false} />
        <div className="actions">
          <button type="submit">{t.changePassword.submit}</button>
        </div>
      </form>
    </Document>
  );
}
