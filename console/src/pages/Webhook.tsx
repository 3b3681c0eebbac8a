import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { type WebhookBody, type WebhookWithSecret, webhookKeys, webhooks } from '../api/webhooks';
import { ConfirmButton, Notice, ProblemAlert } from '../components/ui';
import { Link, navigate } from '../router';
import { WebhookActivity } from './webhook-activity';
import { WebhookForm, WebhookSecretOnce, draftOfWebhook } from './webhook-form';
import { webhookState } from './Webhooks';

/** A datetime-local value an hour ago / now (the replay range's defaults). */
const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** Replay every dead letter whose event occurred in a time range. */
function ReplayRange({ id, onDone }: { id: string; onDone: () => Promise<unknown> }) {
  const fid = useId();
  const [since, setSince] = useState(() => local(new Date(Date.now() - 24 * 3_600_000)));
  const [until, setUntil] = useState(() => local(new Date(Date.now() + 60_000)));
  const replay = useMutation({ mutationFn: () => webhooks.replayFailed(id, new Date(since).toISOString(), new Date(until).toISOString()), onSuccess: onDone });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    replay.mutate();
  };
  return (
    <form onSubmit={submit} noValidate>
      <div className="field"><label htmlFor={`${fid}-since`}>From</label><input id={`${fid}-since`} type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} /></div>
      <div className="field"><label htmlFor={`${fid}-until`}>Until</label><input id={`${fid}-until`} type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} /></div>
      <ProblemAlert error={replay.error} />
      {replay.data ? <Notice>{replay.data.replayed === 1 ? '1 dead letter' : `${replay.data.replayed} dead letters`} queued again.</Notice> : null}
      <button type="submit" disabled={replay.isPending}>Replay failed messages</button>
    </form>
  );
}

/** One endpoint: its settings, a test delivery, its secret rotated (shown once), its recent attempts and messages, replays, deletion. */
export function WebhookPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const endpoint = useQuery({ queryKey: [...webhookKeys.all, id], queryFn: () => webhooks.get(id) });
  const [fresh, setFresh] = useState<WebhookWithSecret | null>(null);
  const [notice, setNotice] = useState('');
  const refresh = () => qc.invalidateQueries({ queryKey: webhookKeys.all });
  const update = useMutation({ mutationFn: (b: WebhookBody) => webhooks.update(id, b), onSuccess: () => { setNotice('Saved.'); return refresh(); } });
  const test = useMutation({ mutationFn: () => webhooks.test(id), onSuccess: (r) => { setNotice(`Test message ${r.messageId} queued.`); return refresh(); } });
  const rotate = useMutation({ mutationFn: () => webhooks.rotateSecret(id), onSuccess: (w) => { setFresh(w); return refresh(); } });
  const remove = useMutation({ mutationFn: () => webhooks.remove(id), onSuccess: async () => { await refresh(); navigate('/webhooks', `Endpoint ${endpoint.data?.url ?? id} deleted.`); } });
  const w = endpoint.data;
  return (
    <>
      <h1 tabIndex={-1}>Webhook endpoint</h1>
      <ProblemAlert error={endpoint.error} />
      {fresh ? <WebhookSecretOnce endpoint={fresh} /> : null}
      {notice ? <Notice>{notice}</Notice> : null}
      {w ? (
        <>
          <p><code>{w.url}</code>: {webhookState(w)}. {w.pending} waiting, {w.deadLetters} dead letters{w.failingSince ? `; failing since ${new Date(w.failingSince).toLocaleString()}` : ''}.</p>
          {w.publicKey ? <p>Ed25519 public key: <code className="secret-value">{w.publicKey}</code></p> : null}
          <section aria-labelledby="webhook-settings">
            <h2 id="webhook-settings">Settings</h2>
            <WebhookForm key={String(w.updatedAt)} initial={draftOfWebhook(w)} submitLabel="Save" error={update.error} onSubmit={(b) => { setNotice(''); return update.mutateAsync(b); }} />
          </section>
          <section aria-labelledby="webhook-test">
            <h2 id="webhook-test">Test</h2>
            <p>Sends a <code>webhook.test</code> message now (it does not wait behind the endpoint's other messages).</p>
            <ProblemAlert error={test.error} />
            <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>Send test message</button>
          </section>
          <WebhookActivity id={id} />
          <section aria-labelledby="webhook-replay">
            <h2 id="webhook-replay">Replay dead letters</h2>
            <ReplayRange id={id} onDone={refresh} />
          </section>
          <section aria-labelledby="webhook-rotate">
            <h2 id="webhook-rotate">Secret rotation</h2>
            <p>A new secret is shown once; the old one keeps signing beside it for the grace window (24 hours by default), so receivers can switch without losing a delivery.</p>
            <ProblemAlert error={rotate.error} />
            <ConfirmButton label="Rotate secret" confirmLabel="Confirm new secret" onConfirm={() => rotate.mutate()} />
          </section>
          <section aria-labelledby="webhook-delete">
            <h2 id="webhook-delete">Delete</h2>
            <p>Nothing more is sent to it.</p>
            <ProblemAlert error={remove.error} />
            <ConfirmButton label="Delete endpoint" confirmLabel={`Confirm delete of ${w.url}`} onConfirm={() => remove.mutate()} />
          </section>
        </>
      ) : null}
      <p><Link to="/webhooks">Back to webhooks</Link></p>
    </>
  );
}
