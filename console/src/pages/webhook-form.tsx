/** A webhook endpoint's settings (create and edit) and its secret shown once. */
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { fieldErrors } from '../api/problem';
import { type Webhook, type WebhookBody, type WebhookWithSecret, webhookKeys, webhooks } from '../api/webhooks';
import { ProblemAlert } from '../components/ui';

/** The secret just made (create, rotate), shown this once with a copy button. */
export function WebhookSecretOnce({ endpoint }: { endpoint: WebhookWithSecret }) {
  const [copied, setCopied] = useState(false);
  return (
    <section aria-labelledby="webhook-secret-once" className="notice secret">
      <h2 id="webhook-secret-once">Signing secret of {endpoint.url}</h2>
      <p><strong>Copy it now: you will not see it again.</strong> Receivers verify each delivery's <code>webhook-signature</code> with it (Standard Webhooks; the <code>standardwebhooks</code> or <code>svix</code> libraries). If it is lost, rotate it.</p>
      <p><code className="secret-value" aria-label="Signing secret">{endpoint.secret}</code></p>
      <button type="button" onClick={() => void navigator.clipboard.writeText(endpoint.secret).then(() => setCopied(true))}>Copy secret</button>
      {copied ? <span role="status"> Copied.</span> : null}
      {endpoint.publicKey ? <p>Ed25519 public key (v1a signatures): <code className="secret-value">{endpoint.publicKey}</code></p> : null}
    </section>
  );
}

export interface WebhookDraft {
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  ed25519: boolean;
}

export const EMPTY_WEBHOOK: WebhookDraft = { url: '', description: '', eventTypes: [], enabled: true, ed25519: false };

export const draftOfWebhook = (w: Webhook): WebhookDraft => ({ url: w.url, description: w.description, eventTypes: [...w.eventTypes], enabled: w.enabled, ed25519: w.publicKey !== null });

/** The form; `creating` adds the Ed25519 choice (fixed once made). The API checks everything (the URL's host too). */
export function WebhookForm({ initial, submitLabel, error, onSubmit, creating }: { initial: WebhookDraft; submitLabel: string; error: unknown; onSubmit: (b: WebhookBody) => Promise<unknown>; creating?: boolean }) {
  const id = useId();
  const [d, setD] = useState<WebhookDraft>(initial);
  const [busy, setBusy] = useState(false);
  const types = useQuery({ queryKey: webhookKeys.types, queryFn: webhooks.eventTypes, staleTime: Infinity });
  const errs = fieldErrors(error);
  const set = (patch: Partial<WebhookDraft>) => setD({ ...d, ...patch });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      const body: WebhookBody = { url: d.url.trim(), description: d.description, eventTypes: d.eventTypes as WebhookBody['eventTypes'], enabled: d.enabled, ...(creating ? { ed25519: d.ed25519 } : {}) };
      await onSubmit(body);
      if (creating) setD(initial);
    } catch {
      // shown through `error`
    } finally {
      setBusy(false);
    }
  };
  const err = (name: string) => (errs[name] ? <span id={`${id}-${name}-error`} className="field-error">{errs[name]}</span> : null);
  const described = (name: string) => (errs[name] ? { 'aria-invalid': true, 'aria-describedby': `${id}-${name}-error` } : {});
  const offered = (types.data?.items ?? []).filter((t) => t.type !== 'webhook.test');
  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <div className="field">
        <label htmlFor={`${id}-url`}>URL<span aria-hidden="true"> *</span></label>
        <input id={`${id}-url`} type="url" value={d.url} maxLength={2000} required placeholder="https://crm.example.com/hooks" onChange={(e) => set({ url: e.target.value })} {...described('url')} />
        {err('url')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-description`}>Description</label>
        <input id={`${id}-description`} value={d.description} maxLength={500} onChange={(e) => set({ description: e.target.value })} {...described('description')} />
        {err('description')}
      </div>
      <fieldset {...described('eventTypes')}>
        <legend>Event types (none ticked: every type)</legend>
        <div className="checks">
          {offered.map((t) => (
            <label key={t.type} className="check" title={t.description}>
              <input type="checkbox" name="eventTypes" value={t.type} checked={d.eventTypes.includes(t.type)}
                onChange={(e) => set({ eventTypes: e.target.checked ? [...d.eventTypes, t.type] : d.eventTypes.filter((x) => x !== t.type) })} />{' '}
              {t.type}
            </label>
          ))}
        </div>
        {err('eventTypes')}
      </fieldset>
      <fieldset>
        <legend>Delivery</legend>
        <label className="check"><input type="checkbox" checked={d.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Enabled</label>
        {creating ? <label className="check"><input type="checkbox" checked={d.ed25519} onChange={(e) => set({ ed25519: e.target.checked })} /> Also sign with Ed25519 (v1a)</label> : null}
      </fieldset>
      <ProblemAlert error={error} />
      <button type="submit" disabled={busy}>{submitLabel}</button>
    </form>
  );
}
