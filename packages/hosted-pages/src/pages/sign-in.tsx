/**
 * The sign-in page: email and password, "Forgot your password?" (the reset request), a passkey
 * (the button, or the browser's autofill on the email field: conditional UI) posting to
 * `passkeyAction`, and the enabled upstream identity providers' buttons. `email` prefills the
 * field: the one typed before a refusal, or the client's `login_hint`.
 */
import { messages as t } from '../messages';
import { Document, Problem, invalidIf } from './frame';
import { PasskeyForm } from './passkey-form';
import { RESET_PASSWORD_PATH } from './paths';

/** An enabled upstream identity provider's button: a link to `href` (a navigation, not a form post). */
export interface ProviderLink {
  readonly displayName: string;
  readonly href: string;
}

export interface SignInPageProps {
  readonly prefix: string;
  readonly action: string;
  readonly passkeyAction?: string;
  readonly clientName: string;
  readonly email?: string;
  readonly error?: string;
  readonly providers?: readonly ProviderLink[];
}

export function SignInPage(p: SignInPageProps) {
  const invalid = invalidIf('signin-error', p.error);
  return (
    <Document prefix={p.prefix} title={t.signIn.title} scripts={p.passkeyAction !== undefined}>
      <h1>{t.signIn.title}</h1>
      <p>
        {t.signIn.continueTo} <strong>{p.clientName}</strong>
      </p>
      <Problem id="signin-error" message={p.error} />
      <form method="post" action={p.action} noValidate>
        <div className="field">
          <label htmlFor="email">{t.signIn.email}</label>
          <input id="email" name="email" type="email" autoComplete="username webauthn" required defaultValue={p.email ?? ''} {...invalid} autoFocus={!p.email} />
        </div>
        <div className="field">
          <label htmlFor="password">{t.signIn.password}</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required {...invalid} autoFocus={Boolean(p.email)} />
        </div>
        <div className="actions">
          <button type="submit">{t.signIn.submit}</button>
        </div>
      </form>
      <p>
        <a href={RESET_PASSWORD_PATH}>{t.signIn.forgotPassword}</a>
      </p>
      {p.passkeyAction ? <PasskeyForm action={p.passkeyAction} options={`${p.passkeyAction}/options`} label={t.signIn.passkey} autofill secondary /> : null}
      {p.providers?.length ? (
        <nav aria-label={t.signIn.otherWays} className="providers">
          {p.providers.map((x) => (
            <p className="actions" key={x.href}>
              <a className="button secondary" href={x.href}>
                {t.signIn.withProvider} {x.displayName}
              </a>
            </p>
          ))}
        </nav>
      ) : null}
    </Document>
  );
}
