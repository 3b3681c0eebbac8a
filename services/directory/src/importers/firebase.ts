/**
 * Firebase Auth export (`firebase auth:export users.json --format=json`): each user's base64
 * `passwordHash` and `salt` with the project's hash parameters (the console's "Password hash
 * parameters": base64_signer_key, base64_salt_separator, rounds, mem_cost) become a
 * `firebase-scrypt` hash the import reads.
 */
import { type Converted, namesOf } from './types';

export interface FirebaseHashConfig {
  readonly signerKey: string;
  readonly saltSeparator: string;
  readonly rounds: number;
  readonly memCost: number;
}

interface FirebaseUser {
  localId?: string;
  email?: string;
  emailVerified?: boolean;
  displayName?: string;
  passwordHash?: string;
  salt?: string;
  phoneNumber?: string;
}

export function* fromFirebase(exported: unknown, config: FirebaseHashConfig): Generator<Converted> {
  const users = (exported as { users?: FirebaseUser[] } | null)?.users;
  if (!Array.isArray(users)) throw new Error('not a Firebase Auth export: no "users" list');
  for (const u of users) {
    if (!u.email) {
      yield { skip: `user ${u.localId ?? '?'} has no email` };
      continue;
    }
    const phone = u.phoneNumber && /^\+\d{1,15}$/.test(u.phoneNumber) ? Number(u.phoneNumber.slice(1)) : undefined;
    yield {
      user: {
        ...namesOf(undefined, undefined, u.displayName, u.email),
        email: u.email,
        ...(u.localId ? { externalId: u.localId } : {}),
        emailVerified: u.emailVerified === true,
        ...(phone !== undefined ? { phone } : {}),
        ...(u.passwordHash
          ? {
              passwordHash: {
                algorithm: 'firebase-scrypt',
                hash: u.passwordHash,
                salt: u.salt ?? '',
                params: { signerKey: config.signerKey, saltSeparator: config.saltSeparator, rounds: config.rounds, memCost: config.memCost },
              },
            }
          : {}),
      },
    };
  }
}
