/**
 * The password policy's requirements as a list (password-policy.ts). `marks`: each ticked as the
 * password meets it (the reset page checks as you type); without, the plain list (a page with no
 * script: the provider's "choose a new password").
 */
import type { PolicyCheck } from '../password-policy';
import { messages as t } from '../messages';

export function PolicyHints({ id, checks, marks }: { id: string; checks: readonly PolicyCheck[]; marks: boolean }) {
  return (
    <div id={id} className="policy">
      <p id={`${id}-title`}>{t.resetPassword.policyTitle}</p>
      <ul aria-labelledby={`${id}-title`}>
        {checks.map((c) =>
          marks ? (
            <li key={c.id} className={c.met ? 'met' : 'unmet'}>
              <span aria-hidden="true">{c.met ? '✓' : '○'} </span>
              {c.label}
              <span className="visually-hidden">{c.met ? t.resetPassword.met : t.resetPassword.notMet}</span>
            </li>
          ) : (
            <li key={c.id}>{c.label}</li>
          ),
        )}
      </ul>
    </div>
  );
}
