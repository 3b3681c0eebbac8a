/** The account page's forms, declared once by the API's input names (limits from its schema; see ../forms.ts). */
import { bodyFields } from '../api/fields';

export const NAME_FIELDS = bodyFields('/api/v1/me', 'put', { firstName: { label: 'First name', autoComplete: 'given-name' }, lastName: { label: 'Last name', autoComplete: 'family-name' } }, [
  'firstName',
  'lastName',
]);

export const PASSWORD_FIELDS = bodyFields(
  '/api/v1/me/password',
  'post',
  {
    currentPassword: { label: 'Current password', type: 'password', autoComplete: 'current-password' },
    newPassword: { label: 'New password', type: 'password', autoComplete: 'new-password' },
  },
  ['currentPassword', 'newPassword'],
);

export const EMAIL_FIELDS = bodyFields(
  '/api/v1/me/email',
  'post',
  {
    email: { label: 'New email address', type: 'email', autoComplete: 'email' },
    currentPassword: { label: 'Current password', type: 'password', autoComplete: 'current-password' },
  },
  ['email', 'currentPassword'],
);
