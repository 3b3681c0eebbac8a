/**
 * Small cryptographic helpers: AES-256-GCM sealing (signing keys at rest, email-action tokens in
 * events), SHA-256 digests of secrets we only compare, and random opaque tokens.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** iv ‖ ciphertext ‖ tag; the AAD binds the ciphertext to its context (a kid, an event id). */
export function seal(key: Buffer, plaintext: Buffer | string, aad: string): Buffer {
  if (key.length !== 32) throw new Error('AES-256-GCM needs a 32-byte key');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ct, cipher.getAuthTag()]);
}

/** Throws when the key, the AAD or the data is wrong. */
export function open(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('sealed data is too short');
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
}

export function sha256(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** `bytes` random bytes as base64url (32 bytes → 43 characters). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a UUID (any version), as a `uuid` column takes it: check before a lookup by one. */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/**
 * The subject under which a deleted OAuth client's users' access tokens are revoked (those whose
 * RFC 9068 `client_id` is the client): a UUID derived from the client id, which no user or client
 * id equals. The client's own id stays the subject of its service-account tokens (`sub`), revoked
 * also when its powers shrink; this one is revoked only when the client is deleted.
 */
export function clientTokensSubject(clientId: string): string {
  const h = createHash('sha256').update('iam:client-tokens:').update(clientId).digest();
  h[6] = (h[6]! & 0x0f) | 0x80; // version 8 (custom)
  h[8] = (h[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}
