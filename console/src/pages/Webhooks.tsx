import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type WebhookWithSecret, webhookKeys, webhooks } from '../api/webhooks';
import { PagedTable, SearchBox, useListState } from '../components/list';
import { Notice, ProblemAlert } from '../components/ui';
import { Link, arrivalNotice } from '../router';
import { EMPTY_WEBHOOK, WebhookForm, WebhookSecretOnce } from './webhook-form';

/** A state in words: enabled, or why it is not. */
export function webhookState(w: { enabled: boolean; disabledReason: string }): string {
  if (w.enabled) return 'Enabled';
  if (w.disabledReason === 'gone') return 'Disabled: the receiver answered 410 Gone';
  if (w.disabledReason === 'failing') return 'Disabled: failing for days';
  return 'Disabled';
}

/** The webhook endpoints (webhooks.manage, checked by the route): listed, registered; the new secret shown once. */
export function WebhooksPage() {
  const qc = useQueryClient();
  const l = useListState('');
  const [notice, setNotice] = useState(arrivalNotice);
  const [made, setMade] = useState<WebhookWithSecret | null>(null);
  const list = useQuery({ queryKey: [...webhookKeys.all, { page: l.page, pageSize: l.pageSize, q: l.q }], queryFn: () => webhooks.list({ page: l.page, pageSize: l.pageSize, q: l.q }) });
  const create = useMutation({
    mutationFn: webhooks.create,
    onSuccess: (w) => { setMade(w); setNotice(`Endpoint ${w.url} registered.`); return qc.invalidateQueries({ queryKey: webhookKeys.all }); },
  });
  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p>The platform's events, signed (Standard Webhooks), to your URLs: retried for about three days, then kept as dead letters you can replay.</p>
      <SearchBox id="webhook-q" label="Search endpoints" value={l.q} onChange={l.setQ} />
      {notice ? <Notice>{notice}</Notice> : null}
      {made ? <WebhookSecretOnce endpoint={made} /> : null}
      <ProblemAlert error={list.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} noun="endpoint" label="Endpoints" wide columns={['URL', 'Description', 'Event types', 'State', 'Waiting', 'Dead letters']} row={(w) => (
          <tr key={w.id}>
            <td><Link to={`/webhooks/${w.id}`}>{w.url}</Link></td>
            <td>{w.description || '—'}</td>
            <td>{w.eventTypes.join(', ') || 'every type'}</td>
            <td>{webhookState(w)}</td>
            <td>{w.pending}</td>
            <td>{w.deadLetters}</td>
          </tr>
        )} />
      ) : list.isPending ? <p>Loading…</p> : null}
      <section aria-labelledby="new-webhook">
        <h2 id="new-webhook">New endpoint</h2>
        <WebhookForm initial={EMPTY_WEBHOOK} submitLabel="Register endpoint" error={create.error} creating onSubmit={(b) => { setNotice(''); setMade(null); return create.mutateAsync(b); }} />
      </section>
    </>
  );
}
