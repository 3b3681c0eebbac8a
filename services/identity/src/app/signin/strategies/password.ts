/**
 * The password (first factor): checked by the directory over gRPC (argon2 there), at the same cost
 * for a wrong password, an unknown email and a locked one (the directory pays a dummy
 * verification when the flow says not to evaluate). amr `pwd`. It also says whether the account
 * must choose a new password (imported with passwordChangeRequired): the policy's
 * `password_change` step.
 */
import { Type } from '@sinclair/typebox';
import type { Directory } from '../../../domain/ports';
import { emailKey } from '../lockout';
import { defineStrategy } from '../strategy';

export const INVALID_CREDENTIALS = 'The email or password is incorrect.';

export const PasswordInput = Type.Object({
  method: Type.Literal('password'),
  email: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1_024 }),
});

export function passwordStrategy(deps: { directory: Pick<Directory, 'verifyCredentials'> }) {
  return defineStrategy({
    method: 'password',
    input: PasswordInput,
    audit: 'password',
    first: {
      refusal: { message: INVALID_CREDENTIALS, reason: 'identity.invalid_credentials' },
      subject: async (input) => ({ key: emailKey(input.email), principal: null }),
      async verify(ctx, input) {
        const r = await deps.directory.verifyCredentials(input.email, input.password, { skipEvaluation: !ctx.evaluate });
        if (!r.principal || !ctx.key) return { principal: null, accountExists: r.accountExists, accountId: r.accountId };
        return { principal: r.principal, amr: ['pwd'], key: ctx.key, ...(r.passwordChangeRequired === true ? { passwordChangeRequired: true } : {}) };
      },
    },
  });
}
