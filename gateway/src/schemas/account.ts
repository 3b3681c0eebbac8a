/**
 * The account page's API (DESIGN §5 "Hosted pages"): the signed-in person's own record, names,
 * password and email. Bodies name only what a person may change about themselves (never roles,
 * the verified flag or another id): nothing to escalate with.
 */
import { Type } from '@sinclair/typebox';
import { Uuid } from './common';

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Password = Type.String({ minLength: 1, maxLength: 128, writeOnly: true });
const NewPassword = Type.String({ minLength: 1, maxLength: 128, writeOnly: true, description: '≥ 12 characters with upper- and lower-case letters, a digit and a special character' });

export const Me = Type.Object(
  {
    id: Uuid,
    firstName: Type.String(),
    lastName: Type.String(),
    email: Type.String(),
    emailVerified: Type.Boolean(),
    roles: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const UpdateMeBody = Type.Object({ firstName: Type.Optional(Name), lastName: Type.Optional(Name) }, { additionalProperties: false, minProperties: 1 });

export const ChangePasswordBody = Type.Object(
  {
    currentPassword: Password,
    newPassword: NewPassword,
  },
  { additionalProperties: false },
);

export const ChangeEmailBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320, description: 'The new address; trimmed and lower-cased on write' }),
    currentPassword: Password,
  },
  { additionalProperties: false },
);

export const EmailChanged = Type.Object(
  {
    email: Type.String(),
    emailVerified: Type.Literal(false),
    message: Type.String(),
  },
  { additionalProperties: false },
);
