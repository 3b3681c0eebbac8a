/** The sign-out confirmation: of the client (when known) and of this provider; the library's form, our buttons. */
import { messages as t } from '../messages';
import { Document } from './frame';
import { LibraryForm } from './library-form';

export interface LogoutPageProps {
  readonly prefix: string;
  /** oidc-provider's form (id op.logoutForm, its xsrf field). */
  readonly form: string;
  readonly clientName?: string;
}

export function LogoutPage(p: LogoutPageProps) {
  return (
    <Document prefix={p.prefix} title={t.logout.title}>
      <h1>{t.logout.title}</h1>
      <p>
        {t.logout.ask}
        {p.clientName ? (
          <>
            {' '}
            {t.logout.ofClient} <strong>{p.clientName}</strong> {t.logout.and}
          </>
        ) : null}{' '}
        {t.logout.ofProvider}
      </p>
      <LibraryForm html={p.form} />
      <div className="actions">
        <button type="submit" form="op.logoutForm" value="yes" name="logout">
          {t.logout.confirm}
        </button>
        <button type="submit" form="op.logoutForm" className="secondary">
          {t.logout.stay}
        </button>
      </div>
    </Document>
  );
}
