/**
 * A passkey's form: no field to type in, a button the page's script shows (hidden without it, so
 * a page without script offers only what works), the credential posted in `response` (or
 * `registration`), and a status line for a ceremony that failed. signin-script.ts drives it.
 */
import { messages as t } from '../messages';

export interface PasskeyFormProps {
  readonly action: string;
  /** The same-origin URL answering the ceremony's options. */
  readonly options: string;
  readonly label: string;
  /** A registration (enrolment) rather than a sign-in. */
  readonly register?: boolean;
  /** The browser's autofill on the sign-in page's email field (conditional UI). */
  readonly autofill?: boolean;
  readonly secondary?: boolean;
  readonly intro?: string;
}

export function PasskeyForm({ action, options, label, register = false, autofill = false, secondary = false, intro }: PasskeyFormProps) {
  return (
    <form method="post" action={action} data-webauthn-options={options} data-autofill={autofill ? '' : undefined} data-register={register ? '' : undefined}>
      <input type="hidden" name={register ? 'registration' : 'response'} value="" />
      {intro ? <p>{intro}</p> : null}
      <div className="actions">
        <button type="button" className={secondary ? 'secondary' : undefined} data-passkey="" hidden>
          {label}
        </button>
      </div>
      <p id="passkey-status" role="status" data-failed={t.signIn.passkeyFailed} />
    </form>
  );
}
