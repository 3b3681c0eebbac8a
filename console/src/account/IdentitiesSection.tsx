/**
 * Sign-ins with other identity providers (issue #40): the ones linked to this account (unlink,
 * never the last way in), and a button per enabled provider to link it: a fresh sign-in here first
 * (the re-authentication a link needs), then a sign-in there. Unlinking needs a sign-in here within
 * five minutes. Strings: the hosted pages' catalogue (`otherSignIns`).
 */
import { messages } from '@iam/hosted-pages';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { ConfirmButton, Notice, ProblemAlert, counted } from '../components/ui';
import { type LinkedIdentity, identities, identityKeys } from './identities-api';
import { Reauthenticate } from './Reauthenticate';

const t = messages.otherSignIns;
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : t.never);

function IdentityRow({ l, onChanged }: { l: LinkedIdentity; onChanged: () => Promise<unknown> }) {
  const remove = useMutation({ mutationFn: () => identities.unlink(l.id), onSuccess: onChanged });
  const name = l.providerDisplayName || l.provider || t.deletedProvider;
  return (
    <tr>
      <td>{name}</td>
      <td>{l.email || '—'}</td>
      <td><time dateTime={l.createdAt}>{when(l.createdAt)}</time></td>
      <td>{l.lastUsedAt ? <time dateTime={l.lastUsedAt}>{when(l.lastUsedAt)}</time> : t.never}</td>
      <td>
        <ConfirmButton label={t.unlink} name={t.unlinkNamed(name)} confirmLabel={t.unlinkNamed(name)} onConfirm={() => remove.mutate()} />
        {remove.error ? <Reauthenticate error={remove.error} /> : null}
      </td>
    </tr>
  );
}

export function IdentitiesSection() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: identityKeys.mine, queryFn: identities.mine });
  const refresh = () => qc.invalidateQueries({ queryKey: identityKeys.mine });
  const reauthenticate = useMutation({ mutationFn: identities.reauthenticateToLink });
  const link = useMutation({ mutationFn: identities.startLink });
  const complete = useMutation({ mutationFn: identities.completeFromLocation, onSuccess: refresh });
  const once = useRef(false);
  useEffect(() => {
    if (once.current) return;
    once.current = true;
    complete.mutate();
    // Back from the re-authentication: on to the provider.
    const pending = identities.takePendingLink();
    if (pending) link.mutate(pending);
  }, [complete, link]);
  const items = list.data?.items ?? [];
  const linked = new Set(items.map((l) => l.provider));
  const available = (list.data?.providers ?? []).filter((p) => !linked.has(p.name));
  const busy = reauthenticate.isPending || link.isPending;
  return (
    <>
      {list.isPending ? <p role="status">{t.loading}</p> : null}
      {complete.data ? <Notice>{t.linked(complete.data.providerDisplayName)}</Notice> : null}
      <ProblemAlert error={complete.error ?? list.error ?? reauthenticate.error} />
      {items.length > 0 ? (
        <div className="scroll" role="region" aria-label={t.tableLabel} tabIndex={0}>
          <table>
            <caption>{counted(items.length, t.countOne)}</caption>
            <thead>
              <tr><th scope="col">{t.provider}</th><th scope="col">{t.emailThere}</th><th scope="col">{t.linkedAt}</th><th scope="col">{t.lastUsed}</th><th scope="col"><span className="visually-hidden">{t.actions}</span></th></tr>
            </thead>
            <tbody>{items.map((l) => <IdentityRow key={l.id} l={l} onChanged={refresh} />)}</tbody>
          </table>
        </div>
      ) : list.isSuccess ? <p>{t.none}</p> : null}
      {available.length > 0 ? (
        <>
          <p>{t.linkIntro}</p>
          <div className="actions">
            {available.map((p) => (
              <button key={p.name} type="button" disabled={busy} onClick={() => reauthenticate.mutate(p.name)}>{t.link(p.displayName)}</button>
            ))}
          </div>
          {busy ? <p role="status">{t.reauthenticating}</p> : null}
        </>
      ) : null}
      {link.error ? <Reauthenticate error={link.error} /> : null}
    </>
  );
}
