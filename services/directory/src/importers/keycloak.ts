/**
 * Keycloak realm export (`kc.sh export --realm R`, or the users files `R-users-N.json`): each
 * user's password credential (PBKDF2-SHA1/256/512 or Argon2, `secretData` and `credentialData`
 * as Keycloak stores them) becomes a Kratos-form hash the import reads. `UPDATE_PASSWORD` among the
 * required actions becomes `passwordChangeRequired`. Realm roles are dropped unless `keepRoles`
 * (they must exist here first). A TOTP credential (`otp`, subType `totp`) becomes `totp`: its key
 * is the secret's UTF-8 bytes (Keycloak's default) or, with `secretEncoding: "BASE32"`, the
 * decoded secret, written as base32. One the verifier cannot check (HOTP, another algorithm,
 * digits or period) is not carried, and said.
 */
import { base32Decode, base32Encode } from '@iam/platform';
import { type Converted, type ImportUserJson, namesOf } from './types';

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

/** The import's `totp` of a Keycloak OTP credential, or why it cannot be carried. */
export function keycloakTotp(c: KeycloakCredential): NonNullable<ImportUserJson['totp']> | { error: string } {
  let secret: { value?: string };
  let data: { subType?: string; digits?: number; period?: number; algorithm?: string; secretEncoding?: string };
  try {
    secret = JSON.parse(c.secretData ?? '{}') as typeof secret;
    data = JSON.parse(c.credentialData ?? '{}') as typeof data;
  } catch {
    return { error: 'OTP credential data is not JSON' };
  }
  const digits = data.digits ?? 6;
  const period = data.period ?? 30;
  const algorithm = (data.algorithm ?? 'HmacSHA1').replace(/^Hmac/i, '').toUpperCase();
  if (data.subType !== undefined && data.subType !== 'totp') return { error: `an OTP credential of type ${JSON.stringify(data.subType)} was not carried (only TOTP; enrol again after sign-in)` };
  if (algorithm !== 'SHA1' || digits !== 6 || period !== 30) return { error: `an OTP credential with ${algorithm}, ${digits} digits, ${period} s was not carried (only SHA1, 6, 30; enrol again after sign-in)` };
  const key = data.secretEncoding?.toUpperCase() === 'BASE32' ? base32Decode(secret.value ?? '') : Buffer.from(secret.value ?? '', 'utf8');
  if (!key || key.length === 0) return { error: 'an OTP credential without a readable secret was not carried' };
  return { secret: base32Encode(key), algorithm, digits, period };
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
    const otps = (u.credentials ?? []).filter((c) => c.type === 'otp');
    const otp = otps[0] ? keycloakTotp(otps[0]) : undefined;
    if (otp && 'error' in otp) warnings.push(`${u.email}: ${otp.error}`);
    if (otps.length > 1) warnings.push(`${u.email}: ${otps.length} OTP credentials; only the first was carried`);
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
        ...(otp && !('error' in otp) ? { totp: otp } : {}),
      },
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }
}
