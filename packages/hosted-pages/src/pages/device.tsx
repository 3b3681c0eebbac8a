/**
 * The device flow's pages: the code input (the library's form, whose `user_code` field identity
 * labels) and the confirmation of the code the device shows.
 */
import { messages as t } from '../messages';
import { Document, Problem } from './frame';
import { LibraryForm } from './library-form';

export interface UserCodeInputPageProps {
  readonly prefix: string;
  /** oidc-provider's form (id op.deviceInputForm: its xsrf field and the labelled `user_code` input). */
  readonly form: string;
  readonly error?: string;
}

export function UserCodeInputPage(p: UserCodeInputPageProps) {
  return (
    <Document prefix={p.prefix} title={t.device.inputTitle}>
      <h1>{t.device.inputTitle}</h1>
      <p id="code-help">{t.device.inputHelp}</p>
      <Problem id="code-error" message={p.error} />
      <LibraryForm html={p.form} />
      <div className="actions">
        <button type="submit" form="op.deviceInputForm">
          {t.device.continue}
        </button>
      </div>
    </Document>
  );
}

export interface UserCodeConfirmPageProps {
  readonly prefix: string;
  /** oidc-provider's form (id op.deviceConfirmForm). */
  readonly form: string;
  readonly clientName: string;
  readonly userCode: string;
}

export function UserCodeConfirmPage(p: UserCodeConfirmPageProps) {
  return (
    <Document prefix={p.prefix} title={t.device.confirmTitle}>
      <h1>{t.device.confirmTitle}</h1>
      <p>
        <strong>{p.clientName}</strong> {t.device.confirmAsks}
      </p>
      <p>
        <code className="user-code">{p.userCode}</code>
      </p>
      <LibraryForm html={p.form} />
      <div className="actions">
        <button type="submit" form="op.deviceConfirmForm">
          {t.device.continue}
        </button>
        <button type="submit" form="op.deviceConfirmForm" value="yes" name="abort" className="secondary">
          {t.device.cancel}
        </button>
      </div>
    </Document>
  );
}
