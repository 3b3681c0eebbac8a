import { hkdfSync } from 'node:crypto';
import { type EnvReader, JWT_ALGS, type JwtAlg } from '@iam/platform';
import { SealingKeys } from './domain/sealing';

export interface IdentityConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  /** The platform's public origin (PUBLIC_URL, no trailing slash): the built-in console client's redirect URIs live under it. */
  readonly publicUrl: string;
  /** host:port of the directory service. */
  readonly directoryTarget: string;
  readonly jwt: {
    readonly alg: JwtAlg;
    readonly issuer: string;
    readonly audience: string;
    /** Access-token lifetime, seconds. */
    readonly expirySeconds: number;
    /** Refresh-token family lifetime from login (absolute), seconds. */
    readonly refreshExpirySeconds: number;
    /** How long a signing key signs before the next one takes over, hours. */
    readonly keyRotationHours: number;
    /** AES-256 key that encrypts the private signing keys at rest. */
    readonly keyEncryptionKey: Buffer;
    /**
     * JWT_KEY_ENCRYPTION_KEY_PREVIOUS: keys of a rotation, which still open what they sealed (the
     * signing keys, TOTP secrets) and whose derived cookie keys still verify; `reseal` moves
     * everything under the current key, after which they can go (SECURITY.md, "Key rotation").
     */
    readonly previousKeyEncryptionKeys: readonly Buffer[];
  };
  readonly emailActions: {
    /** AES-256 key shared with the notification service: seals the raw tokens in events. */
    readonly sealKey: Buffer;
    /** Password-reset / verification requests allowed per email address per hour. */
    readonly perEmailPerHour: number;
  };
  /** The OpenID provider (DESIGN §5), reached through the gateway only. */
  readonly op: {
    /** IDENTITY_OP_PORT: its HTTP listener (loopback in the all-in-one; 0 = a free port). */
    readonly port: number;
    /** PUBLIC_URL: the issuer of every token (the gateway's public address). */
    readonly publicUrl: string;
    /** Path prefix of its endpoints at the gateway. */
    readonly prefix: string;
    /**
     * OIDC_COOKIE_KEY: the keys of the provider's session and interaction cookies, a comma list:
     * the first signs, every one verifies (a rotation: put the new key first, drop the old one
     * once the sessions it signed have ended). Unset: derived from JWT_KEY_ENCRYPTION_KEY
     * (HKDF-SHA256, its own label), then from each previous key-encryption key.
     */
    readonly cookieKeys: readonly Buffer[];
    /** OIDC_SESSION_TTL: how long a provider session (a sign-in at the provider) lasts, seconds. */
    readonly sessionSeconds: number;
    /**
     * OIDC_REFRESH_RETRY_SECONDS (10): a refresh token presented again this soon after its rotation,
     * its successor unused, gets the same answer again (a client that lost it); 0 = every reuse revokes.
     */
    readonly refreshRetrySeconds: number;
  };
  readonly auth: {
    readonly maxFailedAttempts: number;
    readonly lockoutMinutes: number;
    /**
     * A refresh token rotated at most this many seconds ago, presented again while its successor
     * is unused (a client retrying a refresh whose answer it lost), gets a fresh successor and the
     * family stays valid; reuse after it, or of an older token, revokes the family.
     */
    readonly refreshReuseGraceSeconds: number;
    /**
     * AUTH_RESET_REMOVES_FACTORS_HOURS: a completed password reset removes the second factors and
     * passkeys added this many hours before it (a leaked token's planted factor does not outlive
     * the reset); 0 keeps all.
     */
    readonly resetRemovesFactorsHours: number;
  };
  readonly mfa: {
    /** MFA_REQUIRED_ROLES: members of these roles get no token without a second factor. */
    readonly requiredRoles: readonly string[];
  };
  /**
   * Passkeys (WebAuthn): the RP ID a credential is bound to (WEBAUTHN_RP_ID, by default
   * PUBLIC_URL's host; a parent domain of it lets sibling hosts share passkeys) and the origins a
   * ceremony may come from (PUBLIC_URL's, then WEBAUTHN_ORIGINS), each on the RP ID or below it.
   * Changing the RP ID, or PUBLIC_URL's host while it is the default, orphans every passkey.
   */
  readonly webauthn: { readonly rpId: string; readonly origins: readonly string[] };
  /**
   * IDENTITY_CACHE(_TTL_MS, _MAX_ENTRIES): principals and role sets kept until a directory event
   * changes them, and the provider's client registry reads until a client event or a write does.
   */
  readonly cache: { readonly enabled: boolean; readonly ttlMs: number; readonly maxEntries: number };
}

export interface IdentityDefaults {
  /** The gRPC port when <SERVICE>_GRPC_PORT is unset (the all-in-one derives it from PORT). */
  readonly grpcPort?: number;
  /** The embedded database (all-in-one mode). */
  readonly databaseUrl?: string;
  /** A key kept in the data directory (all-in-one mode); standalone processes must be given one. */
  readonly keyEncryptionKey?: () => Buffer;
  /** Likewise for the email-action sealing key. */
  readonly emailActionKey?: () => Buffer;
  /** The provider's port when IDENTITY_OP_PORT is unset (the all-in-one derives it from PORT). */
  readonly opPort?: number;
}

/** PUBLIC_URL, by default `http://localhost:{PORT}`: the issuer (JWT_ISSUER's default). Shared with the gateway. */
export function readPublicUrl(e: EnvReader): string {
  const port = e.port('PORT', { default: 8080, allowZero: true });
  const url = e.optionalUrl('PUBLIC_URL', ['http', 'https']) ?? `http://localhost:${port}`;
  return url.replace(/\/+$/, '');
}

/**
 * A 32-byte key for one use, derived (HKDF-SHA-256, the use's own label) from the key-encryption
 * key that seals the signing keys: it lives outside the database as that one does, is the same on
 * every replica and needs no setting of its own.
 */
export function derivedKey(keyEncryptionKey: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', keyEncryptionKey, Buffer.alloc(0), label, 32));
}

/**
 * A key of identity's own for one use (`totp-secret` seals TOTP secrets,
 * `webauthn-sign-in-challenge` signs the passwordless sign-in's challenges,
 * `oidc-refresh-answer` seals the answers a refresh retry may get again), derived from the
 * key-encryption key (derivedKey): held by identity alone, unlike EMAIL_ACTION_KEY,
 * shared with notification.
 */
export function identityKey(keyEncryptionKey: Buffer, use: 'totp-secret' | 'webauthn-sign-in-challenge' | 'oidc-refresh-answer'): Buffer {
  return derivedKey(keyEncryptionKey, `iam/identity/${use}/v1`);
}

/** The keys sealing TOTP secrets: derived from the key-encryption key, and from each previous one (a rotation). */
export function totpSealingKeys(jwt: Pick<IdentityConfig['jwt'], 'keyEncryptionKey' | 'previousKeyEncryptionKeys'>): SealingKeys {
  return new SealingKeys(jwt.keyEncryptionKey, jwt.previousKeyEncryptionKeys).map((k) => identityKey(k, 'totp-secret'));
}

/** The provider's cookie key when none is set: a key of its own derived from the key-encryption key. */
export function derivedCookieKey(keyEncryptionKey: Buffer): Buffer {
  return derivedKey(keyEncryptionKey, 'iam/oidc-provider/cookie-key/v1');
}

export function readIdentityConfig(e: EnvReader, defaults: IdentityDefaults = {}): IdentityConfig {
  const publicUrl = readPublicUrl(e);
  const keyEncryptionKey = e.key('JWT_KEY_ENCRYPTION_KEY', { fallback: defaults.keyEncryptionKey, required: true }) ?? Buffer.alloc(32);
  const previousKeyEncryptionKeys = keyList(e, 'JWT_KEY_ENCRYPTION_KEY_PREVIOUS').filter((k) => !k.equals(keyEncryptionKey));
  const cookieKeys = keyList(e, 'OIDC_COOKIE_KEY');
  return {
    databaseUrl: e.url('IDENTITY_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('IDENTITY_GRPC_PORT', { default: defaults.grpcPort ?? 50051, allowZero: true }),
    publicUrl: e.url('PUBLIC_URL', ['http', 'https'], { default: `http://localhost:${e.port('PORT', { default: 8080, allowZero: true })}` }).replace(/\/+$/, ''),
    directoryTarget: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
    jwt: {
      alg: e.oneOf('JWT_ALG', JWT_ALGS, { default: 'EdDSA' }),
      issuer: e.string('JWT_ISSUER', { default: publicUrl }),
      audience: e.string('JWT_AUDIENCE', { default: 'iam-api' }),
      expirySeconds: e.int('JWT_EXPIRY', { default: 300, min: 30, max: 86_400 }),
      refreshExpirySeconds: e.int('JWT_REFRESH_EXPIRY', { default: 604_800, min: 60, max: 31_536_000 }),
      keyRotationHours: e.int('JWT_KEY_ROTATION_HOURS', { default: 720, min: 1, max: 87_600 }),
      keyEncryptionKey,
      previousKeyEncryptionKeys,
    },
    emailActions: {
      sealKey: e.key('EMAIL_ACTION_KEY', { fallback: defaults.emailActionKey, required: true }) ?? Buffer.alloc(32),
      perEmailPerHour: e.int('EMAIL_ACTION_MAX_PER_HOUR', { default: 5, min: 1, max: 10_000 }),
    },
    op: {
      port: e.port('IDENTITY_OP_PORT', { default: defaults.opPort ?? 50061, allowZero: true }),
      publicUrl,
      prefix: '/oidc',
      cookieKeys: cookieKeys.length > 0 ? cookieKeys : [keyEncryptionKey, ...previousKeyEncryptionKeys].map(derivedCookieKey),
      sessionSeconds: e.int('OIDC_SESSION_TTL', { default: 1_209_600, min: 300, max: 31_536_000 }),
      refreshRetrySeconds: e.int('OIDC_REFRESH_RETRY_SECONDS', { default: 10, min: 0, max: 60 }),
    },
    auth: {
      maxFailedAttempts: e.int('AUTH_MAX_FAILED_ATTEMPTS', { default: 5, min: 1, max: 1_000 }),
      lockoutMinutes: e.int('AUTH_LOCKOUT_MINUTES', { default: 15, min: 1, max: 10_080 }),
      refreshReuseGraceSeconds: e.int('AUTH_REFRESH_REUSE_GRACE_SECONDS', { default: 0, min: 0, max: 300 }),
      resetRemovesFactorsHours: e.int('AUTH_RESET_REMOVES_FACTORS_HOURS', { default: 24, min: 0, max: 8_760 }),
    },
    mfa: { requiredRoles: roleList(e, 'MFA_REQUIRED_ROLES') },
    webauthn: readWebauthn(e, publicUrl),
    cache: {
      enabled: e.bool('IDENTITY_CACHE', { default: true }),
      ttlMs: e.int('IDENTITY_CACHE_TTL_MS', { default: 30_000, min: 100, max: 3_600_000 }),
      maxEntries: e.int('IDENTITY_CACHE_MAX_ENTRIES', { default: 10_000, min: 1, max: 10_000_000 }),
    },
  };
}

/** A comma list of base64 keys of 32 bytes each (empty = none); a bad one is a problem naming the variable. */
function keyList(e: EnvReader, name: string): Buffer[] {
  const raw = e.optionalString(name) ?? '';
  const keys: Buffer[] = [];
  for (const [i, item] of raw.split(',').map((k) => k.trim()).filter(Boolean).entries()) {
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(item) ? Buffer.from(item, 'base64') : Buffer.alloc(0);
    if (key.length !== 32) e.problem(name, `key ${i + 1} is not the base64 of 32 bytes (openssl rand -base64 32)`);
    else keys.push(key);
  }
  return keys;
}

/** Whether `host` is the RP ID or a host below it (WebAuthn: the RP ID is the origin's effective domain or a registrable suffix of it). */
function withinRpId(host: string, rpId: string): boolean {
  return host === rpId || host.endsWith(`.${rpId}`);
}

/** WEBAUTHN_RP_ID and WEBAUTHN_ORIGINS, checked against PUBLIC_URL (a ceremony of an origin outside the RP ID can never verify). */
function readWebauthn(e: EnvReader, publicUrl: string): IdentityConfig['webauthn'] {
  let own: URL | undefined;
  try {
    own = new URL(publicUrl);
  } catch {
    own = undefined; // PUBLIC_URL's own problem is reported where it is read
  }
  const rpId = e.string('WEBAUTHN_RP_ID', { default: own?.hostname ?? 'localhost' }).trim().toLowerCase();
  if (!/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/.test(rpId)) {
    e.problem('WEBAUTHN_RP_ID', `"${rpId}" is not a domain name (no scheme, port or path), e.g. example.com`);
  } else if (!rpId.includes('.') && rpId !== 'localhost') {
    e.problem('WEBAUTHN_RP_ID', `"${rpId}" is a top-level domain: browsers refuse it (use PUBLIC_URL's host or a registrable domain above it)`);
  } else if (own && !withinRpId(own.hostname, rpId)) {
    e.problem('WEBAUTHN_RP_ID', `must be PUBLIC_URL's host (${own.hostname}) or a domain it is under, not "${rpId}"`);
  }
  const origins = own ? [own.origin] : [];
  for (const raw of (e.optionalString('WEBAUTHN_ORIGINS') ?? '').split(',').map((o) => o.trim()).filter(Boolean)) {
    let u: URL | undefined;
    try {
      u = new URL(raw);
    } catch {
      u = undefined;
    }
    const local = u !== undefined && (u.hostname === 'localhost' || u.hostname === '127.0.0.1');
    if (!u || u.origin !== raw.replace(/\/$/, '') || !(u.protocol === 'https:' || (u.protocol === 'http:' && local))) {
      e.problem('WEBAUTHN_ORIGINS', `"${raw}" is not an https origin (scheme://host[:port]; http only on localhost)`);
    } else if (!withinRpId(u.hostname, rpId)) {
      e.problem('WEBAUTHN_ORIGINS', `"${raw}" is not on the RP ID ${rpId} or below it: its ceremonies could never verify`);
    } else if (!origins.includes(u.origin)) {
      origins.push(u.origin);
    }
  }
  return { rpId, origins };
}

/** A comma list of role names (blank items dropped); a name with control characters is refused. */
function roleList(e: EnvReader, name: string): string[] {
  const roles = e
    .string(name, { default: '' })
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  if (roles.some((r) => /[\x00-\x1f\x7f]/.test(r) || r.length > 100)) e.problem(name, 'must be a comma-separated list of role names');
  return roles;
}
