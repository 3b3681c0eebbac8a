/**
 * Signing in through another identity provider whose email address names an account here: the
 * account's password once, before the link (no secret of the upstream in the page).
 */
import { messages as t } from '../messages';
import { Document, Problem, invalidIf } from './frame';

export interface ProveAccountPageProps {
  readonly prefix: string;
  readonly action: string;
  readonly providerName: string;
  readonly error?: string;
}

export function ProveAccountPage(p: ProveAccountPageProps) {
  const invalid = invalidIf('prove-error', p.error);
  return (
    <Document prefix={p.prefix} title={t.federation.proveTitle}>
      <h1>{t.federation.proveTitle}</h1>
      <p>{t.federation.proveIntro(p.providerName)}</p>
      <Problem id="prove-error" message={p.error} />
      <form method="post" action={p.action} noValidate>
        <div className="field">
          <label htmlFor="email">{t.signIn.email}</label>
          <input id="email" name="email" type="email" autoComplete="username" required {...invalid} />
        </div>
        <div className="field">
          <label htmlFor="password">{t.signIn.password}</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required {...invalid} />
        </div>
        <div className="actions">
          <button type="submit">{t.federation.proveSubmit}</button>
        </div>
      </form>
    </Document>
  );
}
