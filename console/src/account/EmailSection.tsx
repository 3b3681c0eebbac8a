/**
 * The email address: whether it is verified (a mail to verify it again), and a change (POST
 * /api/v1/me/email, the current password asked again). The directory keeps one address per
 * account: the new one replaces it at once, unverified, and the verification mail goes to the new
 * address; the change ends every session (DESIGN §3), so the page then asks to sign in again.
 */
import { useMutation } from '@tanstack/react-query';
import { endSession } from '../auth/session';
import { Form, Notice, ProblemAlert } from '../components/ui';
import { account } from './api';
import { EMAIL_FIELDS } from './fields';
import type { SectionProps } from './sections';

export function EmailSection({ me }: SectionProps) {
  const verify = useMutation({ mutationFn: account.requestVerification });
  const change = useMutation({
    mutationFn: (v: { email: string; currentPassword: string }) => account.changeEmail(v.email, v.currentPassword),
    onSuccess: (r) => endSession(`${r.message} Every session of your account has ended.`),
  });
  return (
    <>
      <p>
        <strong>{me.email}</strong> {me.emailVerified ? '(verified)' : '(not verified)'}
      </p>
      {me.emailVerified ? null : (
        <p>
          <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending}>Send a verification email</button>
        </p>
      )}
      {verify.isSuccess ? <Notice>A verification email is on its way to {me.email}: follow the link in it.</Notice> : null}
      <ProblemAlert error={verify.error} />
      <h3>Change your email address</h3>
      <p>The new address is used for signing in at once, and is unverified until you follow the link mailed to it. You will be signed out everywhere.</p>
      <Form fields={EMAIL_FIELDS} submitLabel="Change email address" error={change.error} onSubmit={(v) => change.mutateAsync(v)} />
    </>
  );
}
