/**
 * A passkey (WebAuthn, app/passkeys.ts) as a first factor (a sign-in with it alone: user
 * verification makes it multi-factor), as a second factor (an assertion of the challenge made for
 * this mfa token), and as an enrolment (a new passkey registered with user verification). amr
 * `hwk` or `swk` (a synced passkey), and `mfa` as a first factor. Its method is `webauthn` (the
 * REST contract's name).
 *
 * As a first factor the credential's owner is found first, for the lockout: an assertion counts
 * as a login attempt of that account. An unknown credential is the same failure and, like any
 * assertion that does not verify, spends no challenge and writes nothing.
 */
import { AppError } from '@iam/platform';
import { Type } from '@sinclair/typebox';
import type { Directory } from '../../../domain/ports';
import type { PasskeyUseCases } from '../../passkeys';
import { emailKey } from '../lockout';
import { defineStrategy } from '../strategy';

export const INVALID_PASSKEY = 'The passkey could not be verified.';

const Credential = Type.Object({}, { additionalProperties: true });

/** An assertion (`response`) or, for an enrolment, a registration (`registration`, with its name). */
export const PasskeyInput = Type.Object({
  method: Type.Literal('webauthn'),
  response: Type.Optional(Credential),
  registration: Type.Optional(Credential),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export function passkeyStrategy(deps: {
  passkeys: Pick<PasskeyUseCases, 'signInOptions' | 'factorOptions' | 'registrationOptions' | 'verify' | 'ownerOf' | 'register'>;
  /** The owner's principal (the cache in production). */
  principals: Pick<Directory, 'principal'>;
}) {
  const pk = deps.passkeys;
  return defineStrategy({
    method: 'webauthn',
    input: PasskeyInput,
    audit: 'webauthn',
    first: {
      refusal: { message: INVALID_PASSKEY, reason: 'identity.invalid_passkey' },
      anonymousOptions: () => pk.signInOptions(),
      async subject(input) {
        if (input.response === undefined) return { key: null, principal: null };
        const owner = await pk.ownerOf(input.response);
        const principal = owner ? await deps.principals.principal(owner) : null;
        return { key: principal ? emailKey(principal.email) : null, principal };
      },
      async verify(ctx, input) {
        if (input.response === undefined) return { principal: null, accountExists: false };
        const owner = ctx.principal;
        if (!owner || !ctx.key) {
          // Verified all the same (its cost), and refused.
          await pk.verify(input.response, 'signin');
          return { principal: null, accountExists: false };
        }
        const a = ctx.evaluate ? await pk.verify(input.response, 'signin') : null;
        if (!a || a.userId !== owner.userId) return { principal: null, accountExists: true, accountId: owner.userId };
        return { principal: owner, amr: [a.amr, 'mfa'], key: ctx.key };
      },
    },
    second: {
      offered: (status) => status.passkeys > 0,
      options: (ctx) => pk.factorOptions(ctx.userId, ctx.challengeId),
      async verify(ctx, input) {
        if (input.response === undefined) return null;
        const a = await pk.verify(input.response, 'factor');
        return a && a.userId === ctx.userId && a.mfaChallengeId === ctx.challengeId ? { amr: [a.amr] } : null;
      },
    },
    enrol: {
      listed: false,
      options: (ctx) => pk.registrationOptions(ctx.userId),
      async verify(ctx, input) {
        if (input.registration === undefined) return null;
        try {
          const p = await pk.register(ctx.userId, input.name ?? 'Passkey', input.registration);
          return { amr: [p.backedUp || p.deviceType === 'multiDevice' ? 'swk' : 'hwk'], enrolmentPublished: true };
        } catch (err) {
          if (err instanceof AppError && (err.code === 'VALIDATION' || err.code === 'CONFLICT')) return null;
          throw err;
        }
      },
    },
  });
}
