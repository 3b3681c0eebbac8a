/**
 * The person's sessions (GET /api/v1/me/sessions): each sign-in with its device, address and
 * times; one can be ended (its tokens stop at every gateway within a second), the others all at
 * once, or every one, this included ("Sign out everywhere": POST /api/v1/me/sign-out-everywhere
 * ends every session and the account's sign-ins at the OP, then this browser signs out there).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { userAgentSummary } from '../audit-format';
import { signOut } from '../auth/oidc';
import { ConfirmButton, Notice, ProblemAlert, counted } from '../components/ui';
import { account, accountKeys } from './api';

const when = (iso: string) => new Date(iso).toLocaleString();

export function SessionsSection() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: accountKeys.sessions, queryFn: account.sessions });
  const refresh = () => qc.invalidateQueries({ queryKey: accountKeys.sessions });
  const endOne = useMutation({ mutationFn: account.endSession, onSuccess: refresh });
  const endOthers = useMutation({ mutationFn: account.endOtherSessions, onSuccess: refresh });
  const everywhere = useMutation({
    mutationFn: async () => {
      await account.signOutEverywhere();
      await signOut(`${window.location.origin}/account`);
    },
  });
  const items = list.data?.items ?? [];
  return (
    <>
      <p>Every sign-in to your account: on this platform&apos;s sign-in page (like this one), and with your password to the API and the apps that use it.</p>
      {list.isPending ? <p role="status">Loading your sessions…</p> : null}
      {list.isSuccess ? (
        <div className="scroll" role="region" aria-label="Your sessions" tabIndex={0}>
          <table>
            <caption>{counted(items.length, 'session')}, the last used first</caption>
            <thead>
              <tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {items.map((s) => (
                <tr key={s.id}>
                  <td>{s.device || userAgentSummary(s.userAgent) || 'Unknown device'}{s.current ? <strong> (this session)</strong> : null}</td>
                  <td>{s.ip || '—'}</td>
                  <td><time dateTime={s.createdAt}>{when(s.createdAt)}</time></td>
                  <td><time dateTime={s.lastUsedAt}>{when(s.lastUsedAt)}</time></td>
                  <td>{s.current ? null : <ConfirmButton label="End" name={`End the session on ${s.device || 'this device'} from ${when(s.createdAt)}`} confirmLabel="End session" onConfirm={() => endOne.mutate(s.id)} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {endOne.isSuccess ? <Notice>The session has ended.</Notice> : null}
      {endOthers.isSuccess ? <Notice>Every other session has ended.</Notice> : null}
      <div className="actions">
        <ConfirmButton label="Sign out of every other session" confirmLabel="End every other session" onConfirm={() => endOthers.mutate()} />
        <ConfirmButton label="Sign out everywhere" confirmLabel="Sign out everywhere, here too" onConfirm={() => everywhere.mutate()} />
      </div>
      <ProblemAlert error={list.error ?? endOne.error ?? endOthers.error ?? everywhere.error} />
    </>
  );
}
