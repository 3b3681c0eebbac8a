import { useMutation } from '@tanstack/react-query';
import { auth } from '../api/resources';
import { session } from '../auth/session';
import { Notice, ProblemAlert } from '../components/ui';

export function MePage() {
  const c = session()?.claims;
  const verify = useMutation({ mutationFn: auth.requestVerification });
  if (!c) return null;
  return (
    <>
      <h1 tabIndex={-1}>My account</h1>
      <dl className="claims">
        <dt>Email</dt><dd>{c.email ?? '—'}</dd>
        <dt>User id</dt><dd><code>{c.sub}</code></dd>
        <dt>Roles</dt><dd>{c.roles.join(', ') || '—'}</dd>
        <dt>Permissions</dt><dd>{c.permissions.join(', ') || '—'}</dd>
      </dl>
      <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>Send a verification email</button>
      {verify.isSuccess ? <Notice>Verification email requested: follow the link in it to verify your address.</Notice> : null}
      <ProblemAlert error={verify.error} />
    </>
  );
}
