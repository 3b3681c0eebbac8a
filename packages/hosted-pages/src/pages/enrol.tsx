/**
 * Enrolment a policy requires (MFA_REQUIRED_ROLES, or acr_values asking for mfa): an authenticator
 * app, activated by its first code, or a passkey registered instead.
 */
import { messages as t } from '../messages';
import { CodeField } from './factor';
import { Document, Problem } from './frame';
import { PasskeyForm } from './passkey-form';
import { QrCode } from './qr-code';

export interface EnrolPageProps {
  readonly prefix: string;
  readonly action: string;
  readonly secret: string;
  readonly otpauthUri: string;
  readonly error?: string;
}

export function EnrolPage(p: EnrolPageProps) {
  return (
    <Document prefix={p.prefix} title={t.enrol.title} scripts>
      <h1>{t.enrol.title}</h1>
      <p>{t.enrol.intro}</p>
      <Problem id="factor-error" message={p.error} />
      <figure>
        <QrCode text={p.otpauthUri} label={t.enrol.qrLabel} />
        <figcaption>
          {t.enrol.key} <code id="totp-secret">{p.secret.replace(/(.{4})/g, '$1 ').trim()}</code>
        </figcaption>
      </figure>
      <form method="post" action={p.action} noValidate>
        <CodeField error={p.error} />
        <div className="actions">
          <button type="submit">{t.enrol.submit}</button>
        </div>
      </form>
      <PasskeyForm action={p.action} options={`${p.action}/register-options`} label={t.enrol.passkey} intro={t.enrol.passkeyIntro} register secondary />
    </Document>
  );
}
