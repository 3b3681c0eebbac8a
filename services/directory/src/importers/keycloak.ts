/**
 * Keycloak realm export (`kc.sh export --realm R`, or the users files `R-users-N.json`): each
 * user's password credential (PBKDF2-SHA1/256/512 or Argon2, `secretData` and `credentialData`
 * as Keycloak stores them) becomes a Kratos-form hash the import reads. `UPDATE_PASSWORD` among the
 * required actions becomes `passwordChangeRequired`. Realm roles are dropped unless `keepRoles`
 * (they must exist here first). OTP credentials are not carried (warned): the platform's TOTP
 * enrolment has no import yet.
 */
import { type Converted, namesOf } from './types';

interface KeycloakCredential {
  type?: string;
  secretData?: string;
  credentialData?: string;
}

interface KeycloakUser {
  id?: string;
  username?: string;
  email?: string;
  emailVerified?: boolean;
  firstName?: string;
  lastName?: string;
  enabled?: boolean;
  credentials?: KeycloakCredential[];
  realmRoles?: string[];
  requiredActions?: string[];
}

/** Keycloak's built-in roles every user has; never carried. */
const BUILTIN_ROLES = /^(default-roles-.*|offline_access|uma_authorization)$/;

/** Keycloak keeps each additional parameter as a list of strings (`{"memory": ["7168"]}`). */
const param = (p: Record<string, unknown> | undefined, key: string): string | undefined => {
  const raw: unknown = p?.[key];
  const v: unknown = Array.isArray(raw) ? raw[0] : raw;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
};

/** The Kratos-form string of a Keycloak password credential, or why it cannot be carried. */
export function keycloakHash(c: KeycloakCredential): string | { error: string } {
  let secret: { value?: string; salt?: string };
  let data: { hashIterations?: number; algorithm?: string; additionalParameters?: Record<string, unknown> };
  try {
    secret = JSON.parse(c.secretData ?? '{}') as typeof secret;
    data = JSON.parse(c.credentialData ?? '{}') as typeof data;
  } catch {
    return { error: 'credential data is not JSON' };
  }
  const value = secret.value ?? '';
  const salt = secret.salt ?? '';
  const iterations = data.hashIterations ?? 0;
  const hashBytes = Buffer.from(value, 'base64').length;
  switch (data.algorithm) {
    case 'pbkdf2':
      return `$pbkdf2-sha1$i=${iterations},l=${hashBytes}$${salt}$${value}`;
    case 'pbkdf2-sha256':
    case 'pbkdf2-sha512':
      return `$${data.algorithm}$i=${iterations},l=${hashBytes}$${salt}$${value}`;
    case 'argon2': {
      const p = data.additionalParameters;
      const type = param(p, 'type') ?? 'id';
      const raw = (b64: string) => b64.replace(/=+$/, '');
      return `$argon2${type}$v=19$m=${param(p, 'memory') ?? '7168'},t=${iterations},p=${param(p, 'parallelism') ?? '1'}$${raw(salt)}$${raw(value)}`;
    }
    default:
      return { error: `Keycloak password algorithm ${JSON.stringify(data.algorithm)} is not known here` };
  }
}

export function* fromKeycloak(exported: unknown, opts: { keepRoles?: boolean } = {}): Generator<Converted> {
  const users = (exported as { users?: KeycloakUser[] } | null)?.users;
  if (!Array.isArray(users)) throw new Error('not a Keycloak realm export: no "users" list');
  for (const u of users) {
    if (!u.email) {
      yield { skip: `user ${u.username ?? u.id ?? '?'} has no email` };
      continue;
    }
    const warnings: string[] = [];
    const password = u.credentials?.find((c) => c.type === 'password');
    const hash = password ? keycloakHash(password) : undefined;
    if (hash && typeof hash !== 'string') warnings.push(`${u.email}: ${hash.error}; imported without a password`);
    if (u.credentials?.some((c) => c.type === 'otp')) warnings.push(`${u.email}: an OTP credential was not carried (enrol again after sign-in)`);
    const roles = opts.keepRoles ? (u.realmRoles ?? []).filter((r) => !BUILTIN_ROLES.test(r)) : [];
    yield {
      user: {
        ...namesOf(u.firstName, u.lastName, u.username, u.email),
        email: u.email,
        ...(u.id ? { externalId: u.id } : {}),
        emailVerified: u.emailVerified === true,
        ...(roles.length > 0 ? { roles } : {}),
        ...(u.requiredActions?.includes('UPDATE_PASSWORD') ? { passwordChangeRequired: true } : {}),
        ...(typeof hash === 'string' ? { passwordHash: hash } : {}),
      },
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }
}
