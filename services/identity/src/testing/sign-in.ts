/**
 * Tests' composition of the sign-in flow (as service.ts wires it): the password strategy, and the
 * others whose dependencies the test gives; the REST sign-in over it. Tests sign in through the
 * same flow the service runs.
 */
import type { Logger } from '@iam/platform';
import type { AuthUseCases } from '../app/auth';
import type { PasskeyUseCases } from '../app/passkeys';
import { type SignInFlow, createSignInFlow } from '../app/signin/flow';
import { type RestSignIn, createRestSignIn } from '../app/signin/rest';
import { createStrategyRegistry } from '../app/signin/strategy';
import { passkeyStrategy } from '../app/signin/strategies/passkey';
import { passwordStrategy } from '../app/signin/strategies/password';
import { recoveryCodeStrategy } from '../app/signin/strategies/recovery-code';
import { totpStrategy } from '../app/signin/strategies/totp';
import { createTotpSecrets } from '../app/totp-secrets';
import type { SealingKeys } from '../domain/sealing';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';

export function testSignIn(deps: {
  uow: UnitOfWork;
  stores: IdentityStores;
  directory: Directory;
  logger: Logger;
  auth: Pick<AuthUseCases, 'startSession'>;
  passkeys?: PasskeyUseCases;
  totpKeys?: SealingKeys;
  recoveryKey?: Buffer;
  requiredRoles?: readonly string[];
  maxFailedAttempts?: number;
}): { flow: SignInFlow; rest: RestSignIn } {
  const { uow, stores, directory } = deps;
  const strategies = createStrategyRegistry([
    passwordStrategy({ directory }),
    ...(deps.totpKeys ? [totpStrategy({ totp: createTotpSecrets({ totpKeys: deps.totpKeys, issuer: 'IAM', stores, directory }), stores, directory })] : []),
    ...(deps.passkeys ? [passkeyStrategy({ passkeys: deps.passkeys, principals: directory })] : []),
    ...(deps.recoveryKey ? [recoveryCodeStrategy({ recoveryKey: deps.recoveryKey, stores })] : []),
  ]);
  const flow = createSignInFlow({
    settings: { maxFailedAttempts: deps.maxFailedAttempts ?? 5, lockoutMinutes: 15, requiredRoles: deps.requiredRoles ?? [] },
    uow,
    stores,
    strategies,
    principals: directory,
    passwords: directory,
    logger: deps.logger,
  });
  return { flow, rest: createRestSignIn({ flow, auth: deps.auth }) };
}

/** A password sign-in's input. */
export const password = (email: string, pw: string) => ({ method: 'password', email, password: pw }) as const;
