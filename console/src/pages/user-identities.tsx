/** A user's sign-ins with other identity providers (users.manage): listed, and one unlinked (never the user's last way in: 409). */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, call } from '../api/client';
import { keys } from '../api/resources';
import { ConfirmButton, ProblemAlert } from '../components/ui';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

export function UserIdentities({ id }: { id: string }) {
  const qc = useQueryClient();
  const key = [...keys.users, id, 'identities'] as const;
  const list = useQuery({ queryKey: key, queryFn: () => call(() => api.GET('/api/v1/users/{id}/identities', { params: { path: { id } } })), staleTime: 0 });
  const unlink = useMutation({
    mutationFn: (identityId: string) => call(() => api.DELETE('/api/v1/users/{id}/identities/{identityId}', { params: { path: { id, identityId } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: key }),
  });
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="identities-h">
      <h3 id="identities-h">Other sign-ins</h3>
      <ProblemAlert error={list.error ?? unlink.error} />
      {list.isSuccess && items.length === 0 ? <p>None linked.</p> : null}
      {items.length > 0 ? (
        <table>
          <caption>Identity providers linked to this user</caption>
          <thead><tr><th scope="col">Provider</th><th scope="col">Subject there</th><th scope="col">Email there</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {items.map((l) => (
              <tr key={l.id}>
                <td>{l.providerDisplayName || l.provider || 'A deleted provider'}</td><td><code>{l.subject}</code></td><td>{l.email || '—'}</td><td>{when(l.lastUsedAt)}</td>
                <td><ConfirmButton label="Unlink" name={`Unlink ${l.providerDisplayName || l.provider}`} confirmLabel="Unlink" onConfirm={() => unlink.mutate(l.id)} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
