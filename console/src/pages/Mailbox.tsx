import { useQuery } from '@tanstack/react-query';
import { mailbox } from '../api/resources';
import { ProblemAlert } from '../components/ui';
import { Link } from '../router';

/**
 * The development mailbox (make run without SMTP_URL): the mails the platform would have sent,
 * newest first. A mail's links open in a new tab (this tab keeps its session); its HTML part is
 * shown in a sandboxed frame that runs no script, loads nothing the console's CSP refuses and
 * cannot navigate this page; its text part as text.
 */
export function MailboxPage() {
  const list = useQuery({ queryKey: mailbox.key, queryFn: mailbox.list, refetchInterval: 5_000 });
  const items = list.data?.items ?? [];
  return (
    <>
      <h1 tabIndex={-1}>Mailbox (development)</h1>
      <p>
        With no <code>SMTP_URL</code>, <code>make run</code> keeps outgoing mail here instead of sending it (the newest{' '}
        {list.data?.capacity ?? 200}, in memory: a restart empties it). Production configurations have no mailbox.
      </p>
      <div className="toolbar">
        <button type="button" onClick={() => void list.refetch()} disabled={list.isFetching}>Refresh</button>
        <span role="status">{list.isSuccess ? `${items.length} ${items.length === 1 ? 'mail' : 'mails'}` : ''}</span>
      </div>
      <ProblemAlert error={list.error} />
      {items.length > 0 ? (
        <div className="scroll" role="region" aria-label="Mails" tabIndex={0}>
          <table>
            <caption>Mails, newest first</caption>
            <thead><tr><th scope="col">Received</th><th scope="col">To</th><th scope="col">Subject</th></tr></thead>
            <tbody>
              {items.map((m) => (
                <tr key={m.id}>
                  <td><time dateTime={String(m.receivedAt)}>{new Date(m.receivedAt).toLocaleString()}</time></td>
                  <td>{m.to}</td>
                  <td><Link to={`/mailbox/${m.id}`}>{m.subject}</Link></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : list.isSuccess ? <p>No mail yet. Ask for a password reset or an email verification, or place an order, and it shows up here.</p> : null}
    </>
  );
}

/** The http(s) links of a mail's text part, in order, each once. */
export function mailLinks(text: string): string[] {
  const found = text.match(/https?:\/\/[^\s<>"')]+/g) ?? [];
  return [...new Set(found)].filter((u) => {
    try {
      const url = new URL(u);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  });
}

export function MailPage({ id }: { id: string }) {
  const mail = useQuery({ queryKey: [...mailbox.key, id], queryFn: () => mailbox.get(id) });
  const m = mail.data;
  const links = m ? mailLinks(m.text) : [];
  return (
    <>
      <h1 tabIndex={-1}>{m ? m.subject : 'Mail'}</h1>
      <p><Link to="/mailbox">Back to the mailbox</Link></p>
      <ProblemAlert error={mail.error} />
      {m ? (
        <>
          <dl className="mail-headers">
            <dt>To</dt><dd>{m.to}</dd>
            <dt>Received</dt><dd><time dateTime={String(m.receivedAt)}>{new Date(m.receivedAt).toLocaleString()}</time></dd>
            <dt>Message-ID</dt><dd><code>{m.messageId}</code></dd>
          </dl>
          {links.length > 0 ? (
            <section aria-labelledby="mail-links">
              <h2 id="mail-links">Links in this mail</h2>
              <ul className="links">
                {links.map((u) => (
                  <li key={u}><a href={u} target="_blank" rel="noopener noreferrer">{u}</a> <small>(opens in a new tab)</small></li>
                ))}
              </ul>
            </section>
          ) : null}
          <section aria-labelledby="mail-text">
            <h2 id="mail-text">Text part</h2>
            <pre className="mail-body">{m.text}</pre>
          </section>
          <section aria-labelledby="mail-html">
            <h2 id="mail-html">HTML part</h2>
            {/* sandbox="": no scripts, no forms, no popups, no navigation of this page, an opaque origin. */}
            <iframe className="mail-html" title={`HTML part of “${m.subject}”`} sandbox="" srcDoc={m.html} referrerPolicy="no-referrer" />
            <details>
              <summary>HTML source</summary>
              <pre className="mail-body">{m.html}</pre>
            </details>
          </section>
        </>
      ) : null}
    </>
  );
}
