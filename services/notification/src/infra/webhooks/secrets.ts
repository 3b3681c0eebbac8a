/**
 * Endpoint signing material. A `whsec_` secret (v1, HMAC-SHA256) of 32 random bytes, and, when the
 * endpoint asks for it, an Ed25519 key pair (v1a; the public key shown as `whpk_…`). Both are
 * sealed at rest (AES-256-GCM) with the webhook key: HKDF-SHA256 of WEBHOOK_SECRET_KEY with the
 * label below, so the setting's bytes are never used as a key directly and other keys can be
 * derived from it later under other labels. The AAD binds each sealed value to its endpoint and
 * role, so a value copied to another row does not open.
 */
import { type KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, randomBytes } from 'node:crypto';
import { open, seal } from '@iam/platform';

export const WEBHOOK_KEY_LABEL = 'iam/notification/webhook-endpoint-secrets/v1';

/** The AES-256 key that seals endpoint secrets, from the WEBHOOK_SECRET_KEY setting. */
export function deriveWebhookKey(setting: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', setting, Buffer.alloc(0), WEBHOOK_KEY_LABEL, 32));
}

/** A new v1 secret: `whsec_` + base64 of 32 random bytes (the spec asks 24 to 64). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export type SealedRole = 'secret' | 'signing-key';

export function sealFor(key: Buffer, endpointId: string, role: SealedRole, value: Buffer | string): Buffer {
  return seal(key, value, `webhook:${endpointId}:${role}`);
}

export function openFor(key: Buffer, endpointId: string, role: SealedRole, sealed: Buffer): Buffer {
  return open(key, sealed, `webhook:${endpointId}:${role}`);
}

/** A new Ed25519 pair: the private key as PKCS#8 DER (to seal), the public one as `whpk_…`. */
export function newSigningKey(): { privateDer: Buffer; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateDer: privateKey.export({ format: 'der', type: 'pkcs8' }), publicKey: publicKeyText(publicKey) };
}

/** `whpk_` + base64 of the raw 32-byte public key. */
export function publicKeyText(k: KeyObject): string {
  const der = k.export({ format: 'der', type: 'spki' });
  return `whpk_${der.subarray(der.length - 32).toString('base64')}`;
}

export function privateKeyOf(der: Buffer): KeyObject {
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** The public key of a `whpk_…` text (receivers verify v1a signatures with it). */
export function publicKeyFrom(text: string): KeyObject {
  const raw = Buffer.from(text.replace(/^whpk_/, ''), 'base64');
  return createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
}
