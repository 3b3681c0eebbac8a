import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { fieldErrors } from '../api/problem';
import { type ClientBody, type ClientWithSecret, type OAuthClient, clientKeys, clients, keys, permissions, roles } from '../api/resources';
import { can, session } from '../auth/session';
import { Link, arrivalNotice, navigate } from '../router';
import { PagedTable, SearchBox, useListState } from '../components/list';
import { ConfirmButton, Notice, ProblemAlert } from '../components/ui';

/** The grants a client may have (DESIGN §5), in words. */
const GRANTS = [
  ['authorization_code', 'Authorization code (with PKCE)'],
  ['refresh_token', 'Refresh token'],
  ['client_credentials', 'Client credentials (a service account)'],
  ['urn:ietf:params:oauth:grant-type:device_code', 'Device code'],
] as const;
type Grant = (typeof GRANTS)[number][0];

/** The algorithms ID tokens and userinfo may be signed in (the provider keeps a key of each). */
const ALGS = [
  ['RS256', 'RS256 (every app can verify it)'],
  ['ES256', 'ES256'],
  ['EdDSA', 'EdDSA (Ed25519)'],
] as const;
type Alg = (typeof ALGS)[number][0];
const algOf = (v: string): Alg | undefined => ALGS.find(([a]) => a === v)?.[0];

const lines = (text: string) => text.split('\n').map((s) => s.trim()).filter((s) => s !== '');

/**
 * The secret just made, shown this once: a copy button and a plain warning (only its hash is
 * kept; a lost secret is replaced by rotating it).
 */
function SecretOnce({ client }: { client: ClientWithSecret }) {
  const [copied, setCopied] = useState(false);
  if (!client.clientSecret) return null;
  const secret = client.clientSecret;
  return (
    <section aria-labelledby="secret-once" className="notice secret">
      <h2 id="secret-once">Client secret of {client.name}</h2>
      <p><strong>Copy it now: you will not see it again.</strong> Only a hash of it is kept; if it is lost, rotate it.</p>
      <p>Client id <code>{client.clientId}</code></p>
      <p><code className="secret-value" aria-label="Client secret">{secret}</code></p>
      <button type="button" onClick={() => void navigator.clipboard.writeText(secret).then(() => setCopied(true))}>Copy secret</button>
      {copied ? <span role="status"> Copied.</span> : null}
    </section>
  );
}

interface Draft {
  name: string;
  type: 'public' | 'confidential';
  redirectUris: string;
  postLogoutRedirectUris: string;
  grantTypes: Grant[];
  roles: string[];
  requirePar: boolean;
  dpopBound: boolean;
  apiPermissions: string[];
  idTokenSignedResponseAlg: Alg;
  userinfoSignedResponseAlg: Alg | null;
  resourceServer: boolean;
}

const EMPTY: Draft = {
  name: '',
  type: 'confidential',
  redirectUris: '',
  postLogoutRedirectUris: '',
  grantTypes: ['authorization_code', 'refresh_token'],
  roles: [],
  requirePar: false,
  dpopBound: false,
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
};

const draftOf = (c: OAuthClient): Draft => ({
  name: c.name,
  type: c.type,
  redirectUris: c.redirectUris.join('\n'),
  postLogoutRedirectUris: c.postLogoutRedirectUris.join('\n'),
  grantTypes: c.grantTypes.filter((g): g is Grant => GRANTS.some(([k]) => k === g)),
  roles: [...c.roles],
  requirePar: c.requirePar,
  dpopBound: c.dpopBound,
  apiPermissions: [...c.apiPermissions],
  idTokenSignedResponseAlg: c.idTokenSignedResponseAlg,
  userinfoSignedResponseAlg: c.userinfoSignedResponseAlg,
  resourceServer: c.resourceServer,
});

const bodyOf = (d: Draft): ClientBody => ({
  name: d.name.trim(),
  type: d.type,
  redirectUris: lines(d.redirectUris),
  postLogoutRedirectUris: lines(d.postLogoutRedirectUris),
  grantTypes: d.grantTypes,
  roles: d.roles,
  requirePar: d.requirePar,
  dpopBound: d.dpopBound,
  apiPermissions: d.apiPermissions,
  idTokenSignedResponseAlg: d.idTokenSignedResponseAlg,
  userinfoSignedResponseAlg: d.userinfoSignedResponseAlg,
  resourceServer: d.resourceServer,
});

/** A client's settings (create and edit); the API checks them and its field errors show beside each field. */
function ClientForm({ initial, submitLabel, error, onSubmit, clearOnSuccess }: { initial: Draft; submitLabel: string; error: unknown; onSubmit: (b: ClientBody) => Promise<unknown>; clearOnSuccess?: boolean }) {
  const id = useId();
  const [d, setD] = useState<Draft>(initial);
  const [busy, setBusy] = useState(false);
  const errs = fieldErrors(error);
  const allRoles = useQuery({ queryKey: [...keys.roles, 'all'], queryFn: roles.all, enabled: can('roles.manage') });
  const roleNames = [...new Set([...(allRoles.data?.map((r) => r.name) ?? []), ...d.roles])];
  // Permissions the signer may list: every one with permissions.manage, else those it holds (the API checks).
  const allPermissions = useQuery({ queryKey: [...keys.permissions, 'all'], queryFn: permissions.all, enabled: can('permissions.manage') });
  const permissionNames = [...new Set([...(allPermissions.data?.map((p) => p.name) ?? session()?.claims.permissions ?? []), ...d.apiPermissions])].sort();
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await onSubmit(bodyOf(d));
      if (clearOnSuccess) setD(initial);
    } catch {
      // shown through `error`
    } finally {
      setBusy(false);
    }
  };
  const err = (name: string) => (errs[name] ? <span id={`${id}-${name}-error`} className="field-error">{errs[name]}</span> : null);
  const described = (name: string) => (errs[name] ? { 'aria-invalid': true, 'aria-describedby': `${id}-${name}-error` } : {});
  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name<span aria-hidden="true"> *</span></label>
        <input id={`${id}-name`} value={d.name} maxLength={100} required onChange={(e) => set({ name: e.target.value })} {...described('name')} />
        {err('name')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-type`}>Type</label>
        <select id={`${id}-type`} value={d.type} onChange={(e) => set({ type: e.target.value === 'public' ? 'public' : 'confidential' })} {...described('type')}>
          <option value="confidential">Confidential (has a secret: a server)</option>
          <option value="public">Public (no secret: a browser or mobile app)</option>
        </select>
        {err('type')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-redirect`}>Redirect URIs (one per line; https, or http on localhost)</label>
        <textarea id={`${id}-redirect`} rows={3} value={d.redirectUris} onChange={(e) => set({ redirectUris: e.target.value })} {...described('redirectUris')} />
        {err('redirectUris')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-logout`}>Post-logout redirect URIs (one per line)</label>
        <textarea id={`${id}-logout`} rows={2} value={d.postLogoutRedirectUris} onChange={(e) => set({ postLogoutRedirectUris: e.target.value })} {...described('postLogoutRedirectUris')} />
        {err('postLogoutRedirectUris')}
      </div>
      <fieldset {...described('grantTypes')}>
        <legend>Grants</legend>
        {GRANTS.map(([grant, label]) => (
          <label key={grant} className="check">
            <input type="checkbox" name="grantTypes" value={grant} checked={d.grantTypes.includes(grant)}
              onChange={(e) => set({ grantTypes: e.target.checked ? [...d.grantTypes, grant] : d.grantTypes.filter((g) => g !== grant) })} />{' '}
            {label}
          </label>
        ))}
        {err('grantTypes')}
      </fieldset>
      <fieldset {...described('roles')}>
        <legend>Roles of the service account (client credentials only)</legend>
        {roleNames.length === 0 ? <p>{can('roles.manage') ? 'No roles.' : 'Listing roles needs the roles.manage permission.'}</p> : null}
        {roleNames.map((name) => (
          <label key={name} className="check">
            <input type="checkbox" name="roles" value={name} checked={d.roles.includes(name)}
              onChange={(e) => set({ roles: e.target.checked ? [...d.roles, name] : d.roles.filter((r) => r !== name) })} />{' '}
            {name}
          </label>
        ))}
        {err('roles')}
      </fieldset>
      <fieldset {...described('apiPermissions')}>
        <legend>API permissions its users may delegate to it</legend>
        <p>A third-party app asks for each as a scope of the same name; the consent page lists it, and its tokens carry the ones the user holds. None: the app gets no API permission.</p>
        {permissionNames.map((name) => (
          <label key={name} className="check">
            <input type="checkbox" name="apiPermissions" value={name} checked={d.apiPermissions.includes(name)}
              onChange={(e) => set({ apiPermissions: e.target.checked ? [...d.apiPermissions, name] : d.apiPermissions.filter((p) => p !== name) })} />{' '}
            {name}
          </label>
        ))}
        {err('apiPermissions')}
      </fieldset>
      <fieldset>
        <legend>Security</legend>
        <label className="check"><input type="checkbox" checked={d.requirePar} onChange={(e) => set({ requirePar: e.target.checked })} /> Require pushed authorization requests (PAR)</label>
        <label className="check"><input type="checkbox" checked={d.dpopBound} onChange={(e) => set({ dpopBound: e.target.checked })} /> DPoP-bound access tokens</label>
        <label className="check">
          <input type="checkbox" checked={d.resourceServer} onChange={(e) => set({ resourceServer: e.target.checked })} {...described('resourceServer')} /> Resource server: may introspect the access
          tokens of every client (Administrator only)
        </label>
        {err('resourceServer')}
      </fieldset>
      <div className="field">
        <label htmlFor={`${id}-id-alg`}>ID token signature</label>
        <select id={`${id}-id-alg`} value={d.idTokenSignedResponseAlg} onChange={(e) => set({ idTokenSignedResponseAlg: algOf(e.target.value) ?? 'RS256' })} {...described('idTokenSignedResponseAlg')}>
          {ALGS.map(([a, label]) => <option key={a} value={a}>{label}</option>)}
        </select>
        {err('idTokenSignedResponseAlg')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-userinfo-alg`}>Userinfo answer</label>
        <select id={`${id}-userinfo-alg`} value={d.userinfoSignedResponseAlg ?? ''} onChange={(e) => set({ userinfoSignedResponseAlg: algOf(e.target.value) ?? null })} {...described('userinfoSignedResponseAlg')}>
          <option value="">Plain JSON</option>
          {ALGS.map(([a, label]) => <option key={a} value={a}>Signed JWT, {label}</option>)}
        </select>
        {err('userinfoSignedResponseAlg')}
      </div>
      <ProblemAlert error={error} />
      <button type="submit" disabled={busy}>{submitLabel}</button>
    </form>
  );
}

/** The OAuth clients (clients.manage, checked by the route): listed, registered; a new secret shown once. */
export function ClientsPage() {
  const qc = useQueryClient();
  // The clients API has no sort: registration order, the built-in client first.
  const l = useListState('');
  const [notice, setNotice] = useState(arrivalNotice);
  const [made, setMade] = useState<ClientWithSecret | null>(null);
  const list = useQuery({ queryKey: [...clientKeys, { page: l.page, pageSize: l.pageSize, q: l.q }], queryFn: () => clients.list({ page: l.page, pageSize: l.pageSize, q: l.q }) });
  const create = useMutation({
    mutationFn: clients.create,
    onSuccess: (c) => { setMade(c); setNotice(`Client ${c.name} registered.`); return qc.invalidateQueries({ queryKey: clientKeys }); },
  });
  return (
    <>
      <h1 tabIndex={-1}>OAuth clients</h1>
      <SearchBox id="client-q" label="Search clients" value={l.q} onChange={l.setQ} />
      {notice ? <Notice>{notice}</Notice> : null}
      {made ? <SecretOnce client={made} /> : null}
      <ProblemAlert error={list.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} noun="client" label="Clients" wide columns={['Name', 'Client id', 'Type', 'Grants', 'Roles', 'API permissions']} row={(c) => (
          <tr key={c.clientId}>
            <td>{c.builtIn ? <>{c.name} (built in)</> : <Link to={`/clients/${c.clientId}`}>{c.name}</Link>}</td>
            <td><code>{c.clientId}</code></td>
            <td>{c.type}</td>
            <td>{c.grantTypes.join(', ')}</td>
            <td>{c.roles.join(', ') || '—'}</td>
            <td>{c.apiPermissions.join(', ') || '—'}</td>
          </tr>
        )} />
      ) : list.isPending ? <p>Loading…</p> : null}
      <section aria-labelledby="new-client">
        <h2 id="new-client">New client</h2>
        <ClientForm initial={EMPTY} submitLabel="Register client" error={create.error} clearOnSuccess onSubmit={(b) => { setNotice(''); setMade(null); return create.mutateAsync(b); }} />
      </section>
    </>
  );
}

/** One client: its settings edited, its secret rotated (shown once), or the client deleted. */
export function ClientPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const client = useQuery({ queryKey: [...clientKeys, id], queryFn: () => clients.get(id) });
  const [fresh, setFresh] = useState<ClientWithSecret | null>(null);
  const [saved, setSaved] = useState(false);
  const refresh = () => qc.invalidateQueries({ queryKey: clientKeys });
  const update = useMutation({ mutationFn: (b: ClientBody) => clients.update(id, b), onSuccess: (c) => { setSaved(true); setFresh(c.clientSecret ? c : null); return refresh(); } });
  const rotate = useMutation({ mutationFn: () => clients.rotateSecret(id), onSuccess: (c) => { setFresh(c); return refresh(); } });
  const remove = useMutation({ mutationFn: () => clients.remove(id), onSuccess: async () => { await refresh(); navigate('/clients', `Client ${client.data?.name ?? id} deleted.`); } });
  const c = client.data;
  return (
    <>
      <h1 tabIndex={-1}>Client {c?.name ?? ''}</h1>
      <ProblemAlert error={client.error} />
      {fresh ? <SecretOnce client={fresh} /> : null}
      {c ? (
        <>
          <p>Client id <code>{c.clientId}</code>, {c.type}{c.builtIn ? ', built in (read only)' : ''}.</p>
          {c.builtIn ? null : (
            <>
              <section aria-labelledby="client-settings">
                <h2 id="client-settings">Settings</h2>
                <p>Adding a redirect URI, changing the type or turning on the device code grant ends every grant users gave the app: they are asked to consent again.</p>
                {saved ? <Notice>Saved.</Notice> : null}
                <ClientForm key={c.updatedAt} initial={draftOf(c)} submitLabel="Save" error={update.error} onSubmit={(b) => { setSaved(false); return update.mutateAsync(b); }} />
              </section>
              {c.type === 'confidential' ? (
                <section aria-labelledby="client-secret">
                  <h2 id="client-secret">Secret</h2>
                  <p>A new secret replaces the current one at once: the old one stops working, and every user of the app is asked to consent again.</p>
                  <ProblemAlert error={rotate.error} />
                  <ConfirmButton label="Rotate secret" confirmLabel={`Confirm new secret for ${c.name}`} onConfirm={() => rotate.mutate()} />
                </section>
              ) : null}
              <section aria-labelledby="client-delete">
                <h2 id="client-delete">Delete</h2>
                <p>Its grants and tokens are revoked.</p>
                <ProblemAlert error={remove.error} />
                <ConfirmButton label="Delete client" name={`Delete client ${c.name}`} confirmLabel={`Confirm delete of client ${c.name}`} onConfirm={() => remove.mutate()} />
              </section>
            </>
          )}
        </>
      ) : null}
      <p><Link to="/clients">Back to clients</Link></p>
    </>
  );
}
