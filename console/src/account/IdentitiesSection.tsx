/**
 * Sign-ins with other identity providers (issue #40): the ones linked to this account (unlink,
 * never the last way in), and a button per enabled provider to link it (a sign-in there; linking
 * and unlinking need a sign-in here within five minutes).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { ConfirmButton, Notice, ProblemAlert, counted } from '../components/ui';
import { type LinkedIdentity, identities, identityKeys } from './identities-api';
import { Reauthenticate } from './Reauthenticate';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

function IdentityRow({ l, onChanged }: { l: LinkedIdentity; onChanged: () => Promise<unknown> }) {
  const remove = useMutation({ mutationFn: () => identities.unlink(l.id), onSuccess: onChanged });
  const name = l.providerDisplayName || l.provider || 'A deleted provider';
  return (
    <tr>
      <td>{name}</td>
      <td>{l.email || '—'}</td>
      <td><time dateTime={l.createdAt}>{when(l.createdAt)}</time></td>
      <td>{l.lastUsedAt ? <time dateTime={l.lastUsedAt}>{when(l.lastUsedAt)}</time> : 'never'}</td>
      <td>
        <ConfirmButton label="Unlink" name={`Unlink ${name}`} confirmLabel={`Unlink ${name}`} onConfirm={() => remove.mutate()} />
        {remove.error ? <Reauthenticate error={remove.error} /> : null}
      </td>
    </tr>
  );
}

export function IdentitiesSection() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: identityKeys.mine, queryFn: identities.mine });
  const refresh = () => qc.invalidateQueries({ queryKey: identityKeys.mine });
  const link = useMutation({ mutationFn: identities.startLink });
  const complete = useMutation({ mutationFn: identities.completeFromLocation, onSuccess: refresh });
  const once = useRef(false);
  useEffect(() => {
    if (once.current) return;
    once.current = true;
    complete.mutate();
  }, [complete]);
  const items = list.data?.items ?? [];
  const linked = new Set(items.map((l) => l.provider));
  const available = (list.data?.providers ?? []).filter((p) => !linked.has(p.name));
  return (
    <>
      {list.isPending ? <p role="status">Loading…</p> : null}
      {complete.data ? <Notice>{complete.data.providerDisplayName} is linked: you can sign in with it.</Notice> : null}
      <ProblemAlert error={complete.error ?? list.error} />
      {items.length > 0 ? (
        <div className="scroll" role="region" aria-label="Your linked sign-ins" tabIndex={0}>
          <table>
            <caption>{counted(items.length, 'linked sign-in')}</caption>
            <thead>
              <tr><th scope="col">Provider</th><th scope="col">Email there</th><th scope="col">Linked</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>{items.map((l) => <IdentityRow key={l.id} l={l} onChanged={refresh} />)}</tbody>
          </table>
        </div>
      ) : list.isSuccess ? <p>No other sign-in is linked to your account.</p> : null}
      {available.length > 0 ? (
        <div className="actions">
          {available.map((p) => (
            <button key={p.name} type="button" disabled={link.isPending} onClick={() => link.mutate(p.name)}>Link {p.displayName}</button>
          ))}
        </div>
      ) : null}
      {link.error ? <Reauthenticate error={link.error} /> : null}
    </>
  );
}
