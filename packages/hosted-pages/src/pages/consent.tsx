/**
 * The consent page: the OpenID scopes asked, in words, and each API permission the app asks to use
 * on the user's behalf (its name and description), under its own heading.
 */
import { messages as t } from '../messages';
import { Document } from './frame';

export interface ConsentPageProps {
  readonly prefix: string;
  readonly action: string;
  readonly clientName: string;
  readonly scopes: readonly string[];
  readonly apiPermissions?: ReadonlyArray<{ name: string; description: string }>;
}

export function ConsentPage(p: ConsentPageProps) {
  const api = p.apiPermissions ?? [];
  return (
    <Document prefix={p.prefix} title={t.consent.title}>
      <h1>{t.consent.title}</h1>
      <p>
        <strong>{p.clientName}</strong> {t.consent.asks}
      </p>
      <ul>
        {p.scopes.map((s) => (
          <li key={s}>{t.consent.scopes[s] ?? s}</li>
        ))}
      </ul>
      {api.length ? (
        <>
          <h2 id="api-permissions">{t.consent.apiHeading}</h2>
          <p>{t.consent.apiIntro}</p>
          <ul aria-labelledby="api-permissions">
            {api.map((x) => (
              <li key={x.name}>
                <strong>{x.name}</strong>
                {x.description ? `: ${x.description}` : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <form method="post" action={p.action}>
        <div className="actions">
          <button type="submit" name="decision" value="allow">
            {t.consent.allow}
          </button>
          <button type="submit" name="decision" value="deny" className="secondary">
            {t.consent.deny}
          </button>
        </div>
      </form>
    </Document>
  );
}
