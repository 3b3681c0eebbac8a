import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { fieldErrors } from '../api/problem';
import { type IdentityProvider, type ProviderBody, identityProviders, keys, providerKeys, roles } from '../api/resources';
import { can } from '../auth/session';
import { Link, arrivalNotice, navigate } from '../router';
import { PagedTable, SearchBox, useListState } from '../components/list';
import { ConfirmButton, Notice, ProblemAlert } from '../components/ui';

const KINDS = [
  ['oidc', 'OpenID Connect (Okta, Microsoft Entra ID, Keycloak, …)'],
  ['google', 'Google'],
  ['github', 'GitHub'],
] as const;
type Kind = (typeof KINDS)[number][0];
const LINKINGS = [
  ['verified-email', 'By a verified email (by itself only when both are verified and the provider is trusted; else the user signs in first)'],
  ['re-authenticate', 'Only after the user signs in to the account'],
  ['never', 'Never (a matching email is refused)'],
] as const;
type Linking = (typeof LINKINGS)[number][0];

interface Draft {
  kind: Kind;
  name: string;
  displayName: string;
  discoveryUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  subjectClaims: string;
  trustEmailVerified: boolean;
  trustUpstreamMfa: boolean;
  allowSignUp: boolean;
  linking: Linking;
  defaultRoles: string[];
  iconUrl: string;
  enabled: boolean;
}

const EMPTY: Draft = { kind: 'oidc', name: '', displayName: '', discoveryUrl: '', clientId: '', clientSecret: '', scopes: '', subjectClaims: 'sub', trustEmailVerified: false, trustUpstreamMfa: false, allowSignUp: false, linking: 'verified-email', defaultRoles: [], iconUrl: '', enabled: true };

const draftOf = (p: IdentityProvider): Draft => ({
  kind: p.kind,
  name: p.name,
  displayName: p.displayName,
  discoveryUrl: p.discoveryUrl ?? '',
  clientId: p.clientId,
  clientSecret: '',
  scopes: p.scopes.join(' '),
  subjectClaims: p.claimMapping.subject.join(' '),
  trustEmailVerified: p.trustEmailVerified,
  trustUpstreamMfa: p.trustUpstreamMfa,
  allowSignUp: p.allowSignUp,
  linking: p.linking,
  defaultRoles: [...p.defaultRoles],
  iconUrl: p.iconUrl,
  enabled: p.enabled,
});

const words = (s: string) => s.split(/\s+/).filter((w) => w !== '');

/** The body: a secret only when one was typed (an edit with the field empty keeps the stored one). */
const bodyOf = (d: Draft): ProviderBody => ({
  kind: d.kind,
  name: d.name.trim(),
  displayName: d.displayName.trim(),
  discoveryUrl: d.kind === 'oidc' ? d.discoveryUrl.trim() : null,
  clientId: d.clientId.trim(),
  ...(d.clientSecret ? { clientSecret: d.clientSecret } : {}),
  scopes: words(d.scopes),
  claimMapping: { subject: words(d.subjectClaims).length ? words(d.subjectClaims) : ['sub'] },
  trustEmailVerified: d.trustEmailVerified,
  trustUpstreamMfa: d.trustUpstreamMfa,
  allowSignUp: d.allowSignUp,
  linking: d.linking,
  defaultRoles: d.defaultRoles,
  iconUrl: d.iconUrl.trim(),
  enabled: d.enabled,
});

/** A provider's settings (create and edit); the API checks them and its field errors show beside each field. */
function ProviderForm({ initial, submitLabel, error, onSubmit, clearOnSuccess, hasSecret }: { initial: Draft; submitLabel: string; error: unknown; onSubmit: (b: ProviderBody) => Promise<unknown>; clearOnSuccess?: boolean; hasSecret?: boolean }) {
  const id = useId();
  const [d, setD] = useState<Draft>(initial);
  const [busy, setBusy] = useState(false);
  const errs = fieldErrors(error);
  const allRoles = useQuery({ queryKey: [...keys.roles, 'all'], queryFn: roles.all, enabled: can('roles.manage') });
  const roleNames = [...new Set([...(allRoles.data?.map((r) => r.name) ?? []), ...d.defaultRoles])];
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await onSubmit(bodyOf(d));
      setD(clearOnSuccess ? initial : { ...d, clientSecret: '' });
    } catch {
      // shown through `error`
    } finally {
      setBusy(false);
    }
  };
  const err = (name: string) => (errs[name] ? <span id={`${id}-${name}-error`} className="field-error">{errs[name]}</span> : null);
  const described = (name: string) => (errs[name] ? { 'aria-invalid': true, 'aria-describedby': `${id}-${name}-error` } : {});
  const text = (name: keyof Draft & string, label: string, opts: { required?: boolean; type?: string; hint?: string } = {}) => (
    <div className="field">
      <label htmlFor={`${id}-${name}`}>{label}{opts.required ? <span aria-hidden="true"> *</span> : null}</label>
      {opts.hint ? <p className="hint">{opts.hint}</p> : null}
      <input id={`${id}-${name}`} type={opts.type ?? 'text'} value={String(d[name])} required={opts.required} autoComplete="off" onChange={(e) => set({ [name]: e.target.value })} {...described(name)} />
      {err(name)}
    </div>
  );
  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <div className="field">
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={d.kind} onChange={(e) => set({ kind: KINDS.find(([k]) => k === e.target.value)?.[0] ?? 'oidc' })} {...described('kind')}>
          {KINDS.map(([k, label]) => <option key={k} value={k}>{label}</option>)}
        </select>
        {err('kind')}
      </div>
      {text('name', 'Short name (lower-case letters, digits, dashes; the callback is /oidc/federation/{name}/callback)', { required: true })}
      {text('displayName', 'Button text ("Sign in with …")', { required: true })}
      {d.kind === 'oidc' ? text('discoveryUrl', 'Discovery URL', { required: true, hint: 'https://…/.well-known/openid-configuration (http only on localhost)' }) : null}
      {text('clientId', 'Client id at the provider', { required: true })}
      {text('clientSecret', hasSecret ? 'Client secret (set; type a new one to replace it)' : 'Client secret', { type: 'password', hint: 'Sealed at rest; never shown again.' })}
      {text('scopes', 'Scopes (space separated; empty for the defaults)')}
      {d.kind === 'oidc' ? text('subjectClaims', 'Subject claims (space separated; Microsoft Entra ID: tid oid)') : null}
      <div className="field">
        <label htmlFor={`${id}-linking`}>Joining an existing account with the same email</label>
        <select id={`${id}-linking`} value={d.linking} onChange={(e) => set({ linking: LINKINGS.find(([l]) => l === e.target.value)?.[0] ?? 'verified-email' })} {...described('linking')}>
          {LINKINGS.map(([l, label]) => <option key={l} value={l}>{label}</option>)}
        </select>
        {err('linking')}
      </div>
      <fieldset>
        <legend>Trust</legend>
        <label className="check"><input type="checkbox" checked={d.trustEmailVerified} onChange={(e) => set({ trustEmailVerified: e.target.checked })} /> Believe its “email verified”</label>
        <label className="check"><input type="checkbox" checked={d.trustUpstreamMfa} onChange={(e) => set({ trustUpstreamMfa: e.target.checked })} /> Its second factor counts here</label>
        <label className="check"><input type="checkbox" checked={d.allowSignUp} onChange={(e) => set({ allowSignUp: e.target.checked })} /> Make an account for a new user</label>
        <label className="check"><input type="checkbox" checked={d.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Shown on the sign-in page</label>
      </fieldset>
      <fieldset {...described('defaultRoles')}>
        <legend>Roles of accounts it makes</legend>
        {roleNames.length === 0 ? <p>{can('roles.manage') ? 'No roles.' : 'Listing roles needs the roles.manage permission.'}</p> : null}
        {roleNames.map((name) => (
          <label key={name} className="check">
            <input type="checkbox" name="defaultRoles" value={name} checked={d.defaultRoles.includes(name)}
              onChange={(e) => set({ defaultRoles: e.target.checked ? [...d.defaultRoles, name] : d.defaultRoles.filter((r) => r !== name) })} />{' '}
            {name}
          </label>
        ))}
        {err('defaultRoles')}
      </fieldset>
      {text('iconUrl', 'Icon URL (https; optional)')}
      <ProblemAlert error={error} />
      <button type="submit" disabled={busy}>{submitLabel}</button>
    </form>
  );
}

/** The identity providers (identity-providers.manage, checked by the route): listed, configured. */
export function IdentityProvidersPage() {
  const qc = useQueryClient();
  const l = useListState('');
  const [notice, setNotice] = useState(arrivalNotice);
  const list = useQuery({ queryKey: [...providerKeys, { page: l.page, pageSize: l.pageSize, q: l.q }], queryFn: () => identityProviders.list({ page: l.page, pageSize: l.pageSize, q: l.q }) });
  const create = useMutation({
    mutationFn: identityProviders.create,
    onSuccess: (p) => { setNotice(`Identity provider ${p.displayName} configured.`); return qc.invalidateQueries({ queryKey: providerKeys }); },
  });
  return (
    <>
      <h1 tabIndex={-1}>Identity providers</h1>
      <p>Users may sign in with these beside their password; each enabled one is a button on the sign-in page.</p>
      <SearchBox id="provider-q" label="Search identity providers" value={l.q} onChange={l.setQ} />
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={list.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} noun="identity provider" label="Identity providers" wide columns={['Button', 'Name', 'Kind', 'Joins accounts', 'Sign-up', 'Enabled']} row={(p) => (
          <tr key={p.id}>
            <td><Link to={`/identity-providers/${p.id}`}>{p.displayName}</Link></td>
            <td><code>{p.name}</code></td>
            <td>{p.kind}</td>
            <td>{p.linking}{p.trustEmailVerified ? ' (trusted email)' : ''}</td>
            <td>{p.allowSignUp ? 'yes' : 'no'}</td>
            <td>{p.enabled ? 'yes' : 'no'}</td>
          </tr>
        )} />
      ) : list.isPending ? <p>Loading…</p> : null}
      <section aria-labelledby="new-provider">
        <h2 id="new-provider">New identity provider</h2>
        <ProviderForm initial={EMPTY} submitLabel="Add identity provider" error={create.error} clearOnSuccess onSubmit={(b) => { setNotice(''); return create.mutateAsync(b); }} />
      </section>
    </>
  );
}

/** One provider: its settings edited (a new secret replaces the stored one), or the provider deleted. */
export function IdentityProviderPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const provider = useQuery({ queryKey: [...providerKeys, id], queryFn: () => identityProviders.get(id) });
  const [saved, setSaved] = useState(false);
  const refresh = () => qc.invalidateQueries({ queryKey: providerKeys });
  const update = useMutation({ mutationFn: (b: ProviderBody) => identityProviders.update(id, b), onSuccess: () => { setSaved(true); return refresh(); } });
  const remove = useMutation({ mutationFn: () => identityProviders.remove(id), onSuccess: async () => { await refresh(); navigate('/identity-providers', `Identity provider ${provider.data?.displayName ?? id} deleted.`); } });
  const p = provider.data;
  return (
    <>
      <h1 tabIndex={-1}>Identity provider {p?.displayName ?? ''}</h1>
      <ProblemAlert error={provider.error} />
      {p ? (
        <>
          <section aria-labelledby="provider-settings">
            <h2 id="provider-settings">Settings</h2>
            {saved ? <Notice>Saved.</Notice> : null}
            <ProviderForm key={p.updatedAt} initial={draftOf(p)} hasSecret={p.hasClientSecret} submitLabel="Save" error={update.error} onSubmit={(b) => { setSaved(false); return update.mutateAsync(b); }} />
          </section>
          <section aria-labelledby="provider-delete">
            <h2 id="provider-delete">Delete</h2>
            <p>Its button goes; accounts linked to it can no longer sign in with it.</p>
            <ProblemAlert error={remove.error} />
            <ConfirmButton label="Delete identity provider" name={`Delete identity provider ${p.displayName}`} confirmLabel={`Confirm delete of ${p.displayName}`} onConfirm={() => remove.mutate()} />
          </section>
        </>
      ) : null}
      <p><Link to="/identity-providers">Back to identity providers</Link></p>
    </>
  );
}
