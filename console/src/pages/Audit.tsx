import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type AuditEntry, type AuditFilter, audit, keys } from '../api/resources';
import { actionLabel, userAgentSummary } from '../audit-format';
import { Link } from '../router';
import { Scroll } from '../components/list';
import { Notice, ProblemAlert } from '../components/ui';
const FIELDS: Array<{ name: keyof AuditFilter; label: string; type?: string; hint?: string }> = [
  { name: 'actorId', label: 'Actor id' },
  { name: 'targetId', label: 'Target id' },
  { name: 'action', label: 'Action starts with', hint: 'e.g. user. or login.failed' },
  { name: 'from', label: 'From', type: 'datetime-local' },
  { name: 'to', label: 'To', type: 'datetime-local' },
];

/** A datetime-local value (the browser's local time) → ISO 8601, as the API takes it. */
const iso = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);

function initialFilter(): AuditFilter {
  const q = new URLSearchParams(window.location.search);
  return { actorId: q.get('actorId') ?? undefined, targetId: q.get('targetId') ?? undefined, action: q.get('action') ?? undefined };
}

const show = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

function Changes({ entry }: { entry: AuditEntry }) {
  if (entry.changes.length === 0) return <>—</>;
  return (
    <ul className="changes">
      {entry.changes.map((c) => (
        <li key={c.field}>
          <code>{c.field}</code>: {c.redacted ? <em>changed (secret, not recorded)</em> : <>{show(c.before)} → {show(c.after)}</>}
        </li>
      ))}
    </ul>
  );
}

function Who({ entry }: { entry: AuditEntry }) {
  const a = entry.actor;
  if (a.type === 'user') return <>{a.email ?? a.id}{a.id ? <> (<Link to={`/audit?actorId=${a.id}`}>their actions</Link>)</> : null}</>;
  return <>{a.type === 'anonymous' ? 'anonymous' : 'system'}</>;
}

/** Where from: the client's address, and its user agent in short with the full string on demand. */
function From({ entry }: { entry: AuditEntry }) {
  return (
    <>
      {entry.clientIp ?? '—'}
      {entry.userAgent ? (
        <details className="ua">
          <summary>{userAgentSummary(entry.userAgent)}</summary>
          <small>{entry.userAgent}</small>
        </details>
      ) : null}
    </>
  );
}

/**
 * The audit trail (audit.read, checked by the route): who did what, when, from where; newest
 * first, filtered, keyset pages ("Older" follows the cursor, "Newest" starts over); the hash
 * chain verified on demand.
 */
export function AuditPage() {
  const [draft, setDraft] = useState<AuditFilter>(initialFilter);
  const [filter, setFilter] = useState<AuditFilter>(initialFilter);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useQuery({ queryKey: [...keys.audit, filter, cursor], queryFn: () => audit.list(filter, cursor) });
  const verify = useMutation({ mutationFn: audit.verify });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setFilter({ ...draft, from: iso(draft.from), to: iso(draft.to) });
    setCursors([]);
  };
  return (
    <>
      <h1 tabIndex={-1}>Audit trail</h1>
      <form className="filters" onSubmit={apply} noValidate aria-label="Filter the audit trail">
        {FIELDS.map((f) => (
          <div className="field" key={f.name}>
            <label htmlFor={`audit-${f.name}`}>{f.label}</label>
            <input
              id={`audit-${f.name}`}
              type={f.type ?? 'text'}
              value={draft[f.name] ?? ''}
              placeholder={f.hint}
              onChange={(e) => setDraft({ ...draft, [f.name]: e.target.value || undefined })}
            />
          </div>
        ))}
        <button type="submit">Filter</button>
      </form>
      <p>
        <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>Verify the hash chain</button>
      </p>
      {verify.data ? (
        verify.data.ok ? (
          <Notice>
            The chain is intact: {verify.data.checked} entries checked from entry {verify.data.firstSeq}
            {verify.data.checkpoint
              ? `, signed up to entry ${verify.data.checkpoint.seq} (checkpoint of ${new Date(verify.data.checkpoint.signedAt).toLocaleString()}; ${verify.data.unsignedEntries} newer not yet signed).`
              : '; no signed checkpoint yet.'}
          </Notice>
        ) : (
          <div role="alert" className="problem">
            <strong>The chain is broken at entry {verify.data.brokenAtSeq}</strong>
            <p>{verify.data.reason}</p>
          </div>
        )
      ) : null}
      <ProblemAlert error={list.error ?? verify.error} />
      {list.data ? (
        <>
          <Scroll label="Audit events">
            <table className="wide">
              <caption>Audit events, newest first{cursors.length ? `, page ${cursors.length + 1}` : ''}</caption>
              <thead>
                <tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Who</th><th scope="col">Target</th><th scope="col">Changes</th><th scope="col">From</th></tr>
              </thead>
              <tbody>
                {list.data.items.map((e) => (
                  <tr key={e.id}>
                    <td><time dateTime={e.occurredAt}>{new Date(e.occurredAt).toLocaleString()}</time></td>
                    <td>{actionLabel(e.action)}<br /><small><code>{e.action}</code></small></td>
                    <td><Who entry={e} /></td>
                    <td>{e.target.type}{e.target.id ? <> <Link to={`/audit?targetId=${e.target.id}`}><code>{e.target.id.slice(0, 8)}</code></Link></> : null}</td>
                    <td><Changes entry={e} /></td>
                    <td><From entry={e} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <nav aria-label="Pages" className="pager">
            <button type="button" disabled={cursors.length === 0} onClick={() => setCursors([])}>Newest</button>
            <button type="button" disabled={!list.data.nextCursor} onClick={() => setCursors([...cursors, list.data.nextCursor!])}>Older</button>
          </nav>
        </>
      ) : list.isPending ? <p>Loading…</p> : null}
    </>
  );
}
