/**
 * Passkeys (WebAuthn, DESIGN §5): register one on this device (the browser asks for the screen
 * lock or the security key: user verification), name, list, rename and remove them. A passkey
 * signs in alone, or answers the second step after the password. Adding and removing one need a
 * sign-in within five minutes.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser';
import { useState } from 'react';
import { ConfirmButton, Notice, ProblemAlert, counted } from '../components/ui';
import { type Passkey, factorKeys, factors, needsReauthentication } from './factors-api';
import { Reauthenticate } from './Reauthenticate';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

function PasskeyRow({ p, onChanged }: { p: Passkey; onChanged: () => Promise<unknown> }) {
  const [name, setName] = useState<string | null>(null);
  const rename = useMutation({ mutationFn: (n: string) => factors.renamePasskey(p.id, n), onSuccess: async () => { setName(null); await onChanged(); } });
  const remove = useMutation({ mutationFn: () => factors.removePasskey(p.id), onSuccess: onChanged });
  return (
    <tr>
      <td>
        {name === null ? p.name : (
          <form onSubmit={(e) => { e.preventDefault(); rename.mutate(name); }}>
            <label htmlFor={`rename-${p.id}`} className="visually-hidden">New name of {p.name}</label>
            <input id={`rename-${p.id}`} value={name} maxLength={64} required onChange={(e) => setName(e.target.value)} />
            <button type="submit" disabled={rename.isPending}>Save</button>
            <button type="button" onClick={() => setName(null)}>Cancel</button>
          </form>
        )}
      </td>
      <td>{p.backedUp ? 'Synced' : 'This device only'}</td>
      <td><time dateTime={p.createdAt}>{when(p.createdAt)}</time></td>
      <td>{p.lastUsedAt ? <time dateTime={p.lastUsedAt}>{when(p.lastUsedAt)}</time> : 'never'}</td>
      <td>
        <div className="actions">
          {name === null ? <button type="button" aria-label={`Rename ${p.name}`} onClick={() => setName(p.name)}>Rename</button> : null}
          <ConfirmButton label="Remove" name={`Remove the passkey ${p.name}`} confirmLabel="Remove passkey" onConfirm={() => remove.mutate()} />
        </div>
        {remove.error && needsReauthentication(remove.error) ? <Reauthenticate error={remove.error} /> : <ProblemAlert error={remove.error ?? rename.error} />}
      </td>
    </tr>
  );
}

export function PasskeysSection() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: factorKeys.passkeys, queryFn: factors.passkeys });
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: factorKeys.passkeys }), qc.invalidateQueries({ queryKey: factorKeys.status })]);
  const [name, setName] = useState('');
  const register = useMutation({
    mutationFn: async () => {
      const options = await factors.passkeyOptions();
      // The options are identity's (WebAuthn L3 JSON, @simplewebauthn/server's shape).
      const response = await startRegistration({ optionsJSON: options as never });
      return factors.registerPasskey(name.trim() || 'Passkey', response);
    },
    onSuccess: async () => {
      setName('');
      await refresh();
    },
  });
  const supported = browserSupportsWebAuthn();
  const items = list.data?.items ?? [];
  return (
    <>
      {list.isPending ? <p role="status">Loading your passkeys…</p> : null}
      {list.isSuccess && items.length > 0 ? (
        <div className="scroll" role="region" aria-label="Your passkeys" tabIndex={0}>
          <table>
            <caption>{counted(items.length, 'passkey')}</caption>
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {items.map((p) => <PasskeyRow key={p.id} p={p} onChanged={refresh} />)}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.isSuccess && items.length === 0 ? <p>No passkeys yet. A passkey signs you in with this device&apos;s screen lock or a security key, without a password.</p> : null}
      {supported ? (
        <form onSubmit={(e) => { e.preventDefault(); register.mutate(); }}>
          <div className="field">
            <label htmlFor="passkey-name">Name of the new passkey</label>
            <input id="passkey-name" maxLength={64} placeholder="e.g. Laptop" value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <button type="submit" disabled={register.isPending}>Add a passkey</button>
        </form>
      ) : (
        <p>This browser cannot make passkeys.</p>
      )}
      {register.isSuccess ? <Notice>The passkey is added.</Notice> : null}
      {register.error ? <Reauthenticate error={register.error} /> : <ProblemAlert error={list.error} />}
    </>
  );
}
