import { useMutation, useQuery } from '@tanstack/react-query';
import { auth, keys, users } from '../api/resources';
import { can, session } from '../auth/session';
import { Notice, ProblemAlert } from '../components/ui';

/**
 * The signed-in user: the record from the login response (names, email, roles) and the token's
 * permissions; with users.manage also the stored record (email verified, phone, dates), which the
 * API serves only to that permission.
 */
export function MePage() {
  const s = session();
  const c = s?.claims;
  const record = useQuery({ queryKey: [...keys.users, c?.sub], queryFn: () => users.get(c!.sub), enabled: !!c && can('users.manage') });
  const verify = useMutation({ mutationFn: auth.requestVerification });
  if (!c) return null;
  const u = record.data ?? s?.user;
  const verified = record.data?.emailVerified;
  return (
    <>
      <h1 tabIndex={-1}>My account</h1>
      <dl className="claims">
        <dt>Name</dt><dd>{u ? `${u.firstName} ${u.lastName}` : '—'}</dd>
        <dt>Email</dt><dd>{u?.email ?? c.email ?? '—'}{verified === undefined ? null : verified ? ' (verified)' : ' (not verified)'}</dd>
        {record.data ? (
          <>
            <dt>Phone</dt><dd>{record.data.phone ?? '—'}</dd>
            <dt>Member since</dt><dd>{new Date(record.data.createdAt).toLocaleDateString()}</dd>
          </>
        ) : null}
        <dt>User id</dt><dd><code>{c.sub}</code></dd>
        <dt>Roles</dt><dd>{(u?.roles ?? c.roles).join(', ') || '—'}</dd>
        <dt>Permissions (in this session's token)</dt><dd>{c.permissions.join(', ') || '—'}</dd>
      </dl>
      <p>
        Change your names, email address or password, and see your sessions, on <a href="/account">your account page</a>.
      </p>
      {verified ? null : (
        <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>Send a verification email</button>
      )}
      {verify.isSuccess ? <Notice>Verification email requested: follow the link in it to verify your address.</Notice> : null}
      <ProblemAlert error={record.error ?? verify.error} />
    </>
  );
}
