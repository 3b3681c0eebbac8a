/**
 * An organization invitation's link, `/account?invitation=…` (the mail notification sends): the
 * token is taken out of the address at once (kept in this tab's sessionStorage, so it survives the
 * sign-in's redirects and never reaches a log or a Referer), and once signed in the page offers to
 * join. Accepting is POST /api/v1/invitations/accept as the signed-in user: the directory takes it
 * only from the invited address, once, before it expires.
 */
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Notice, ProblemAlert } from '../components/ui';
import { account } from './api';

const KEY = 'iam.account.invitation';
/** A token is base64url of a sealed value: anything else in the address is not one. */
const TOKEN = /^[A-Za-z0-9_-]{16,2048}$/;

/** Moves `?invitation=` from the address into this tab's storage; call before the sign-in starts. */
export function takeInvitationFromAddress(): void {
  const url = new URL(window.location.href);
  const token = url.searchParams.get('invitation');
  if (token === null) return;
  if (TOKEN.test(token)) sessionStorage.setItem(KEY, token);
  url.searchParams.delete('invitation');
  window.history.replaceState(null, '', `${url.pathname}${url.search}${url.hash}`);
}

export function InvitationNotice() {
  const [token, setToken] = useState(() => sessionStorage.getItem(KEY));
  const accept = useMutation({
    mutationFn: (t: string) => account.acceptInvitation(t),
    onSettled: () => sessionStorage.removeItem(KEY),
  });
  if (accept.isSuccess) return <Notice>You joined the organization.</Notice>;
  if (!token) return null;
  const dismiss = () => {
    sessionStorage.removeItem(KEY);
    setToken(null);
  };
  return (
    <section id="invitation" aria-labelledby="invitation-heading">
      <h2 id="invitation-heading">You are invited to an organization</h2>
      <p>Join it with this account? The invitation works only for the address it was sent to, and only once.</p>
      <p className="actions">
        <button type="button" disabled={accept.isPending} onClick={() => accept.mutate(token)}>Join the organization</button>{' '}
        <button type="button" className="secondary" disabled={accept.isPending} onClick={dismiss}>Not now</button>
      </p>
      <ProblemAlert error={accept.error} />
    </section>
  );
}
