/**
 * Password change (POST /api/v1/me/password): the current password is asked again (a wrong one
 * counts toward the lockout, as a login). The change ends every session of the account, this one
 * too (DESIGN §3), so the page then asks to sign in again, with the new password.
 */
import { useMutation } from '@tanstack/react-query';
import { endSession } from '../auth/session';
import { Form } from '../components/ui';
import { account } from './api';
import { PASSWORD_FIELDS } from './fields';

export function PasswordSection() {
  const change = useMutation({
    mutationFn: (v: { currentPassword: string; newPassword: string }) => account.changePassword(v.currentPassword, v.newPassword),
    onSuccess: () => endSession('Your password is changed, and every session of your account has ended. Sign in again with the new password.'),
  });
  return (
    <>
      <p id="password-help">At least 12 characters, with upper- and lower-case letters, a digit and a special character. Changing it signs you out everywhere, here too.</p>
      <Form fields={PASSWORD_FIELDS} submitLabel="Change password" error={change.error} onSubmit={(v) => change.mutateAsync(v)} clearOnSuccess />
    </>
  );
}
