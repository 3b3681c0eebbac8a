/**
 * Auth0 user export: the NDJSON (or JSON array) Auth0 support sends with password hashes
 * (`{"_id": {"$oid": …}, "email": …, "email_verified": …, "passwordHash": "$2b$10$…"}`), or a
 * user-export job's lines (`user_id`, `given_name`, `family_name`, `name`) without hashes, whose
 * users come in without a password (they reset, or the migration hook answers for them).
 */
import { type Converted, namesOf } from './types';

interface Auth0User {
  _id?: { $oid?: string } | string;
  user_id?: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
  nickname?: string;
  passwordHash?: string;
  password_hash?: string;
}

export function fromAuth0(record: unknown): Converted {
  const u = (record ?? {}) as Auth0User;
  if (!u.email) return { skip: `record ${JSON.stringify(u.user_id ?? u._id ?? '?')} has no email` };
  const oid = typeof u._id === 'string' ? u._id : u._id?.$oid;
  const externalId = u.user_id ?? (oid ? `auth0|${oid}` : undefined);
  const hash = u.passwordHash ?? u.password_hash;
  return {
    user: {
      ...namesOf(u.given_name, u.family_name, u.name ?? u.nickname, u.email),
      email: u.email,
      ...(externalId ? { externalId } : {}),
      emailVerified: u.email_verified === true,
      ...(hash ? { passwordHash: hash } : {}),
    },
  };
}
