/**
 * The challenge of a passwordless sign-in's options, which nobody stores: the options are asked
 * for anonymously (every sign-in page load asks for them), so a stored challenge would be a
 * database write per anonymous request. Instead the challenge carries its own expiry and a MAC
 * under identity's key (HMAC-SHA-256, truncated to 128 bits):
 *
 *   version (1) | expires at, Unix seconds (8, big-endian) | random nonce (16) | MAC (16)
 *
 * The authenticator signs it as it is; the assertion's verification checks the MAC and the
 * expiry, and only an assertion that verifies spends it (a row kept until it expires), so a
 * replay is refused and nothing is written for anything that does not verify.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 1;
const NONCE_BYTES = 16;
const MAC_BYTES = 16;
const SIGNED_BYTES = 1 + 8 + NONCE_BYTES;
export const SIGN_IN_CHALLENGE_BYTES = SIGNED_BYTES + MAC_BYTES;

const mac = (key: Buffer, signed: Buffer): Buffer => createHmac('sha256', key).update('iam/webauthn/sign-in-challenge/v1\0').update(signed).digest().subarray(0, MAC_BYTES);

/** A fresh challenge good until `expiresAt` (to the second). */
export function issueSignInChallenge(key: Buffer, expiresAt: Date): Uint8Array<ArrayBuffer> {
  const signed = Buffer.alloc(SIGNED_BYTES);
  signed.writeUInt8(VERSION, 0);
  signed.writeBigUInt64BE(BigInt(Math.ceil(expiresAt.getTime() / 1000)), 1);
  randomBytes(NONCE_BYTES).copy(signed, 9);
  return new Uint8Array(Buffer.concat([signed, mac(key, signed)]));
}

/**
 * When a challenge (base64url, as the client's data carries it) expires, if it is one of ours and
 * has not expired at `now`; null for anything else (another shape, a MAC that does not match, expired).
 */
export function checkSignInChallenge(key: Buffer, challenge: string, now: Date): Date | null {
  if (challenge.length > 2 * SIGN_IN_CHALLENGE_BYTES || !/^[A-Za-z0-9_-]+$/.test(challenge)) return null;
  const raw = Buffer.from(challenge, 'base64url');
  if (raw.length !== SIGN_IN_CHALLENGE_BYTES || raw.readUInt8(0) !== VERSION) return null;
  const signed = raw.subarray(0, SIGNED_BYTES);
  if (!timingSafeEqual(mac(key, signed), raw.subarray(SIGNED_BYTES))) return null;
  const expiresAt = new Date(Number(signed.readBigUInt64BE(1)) * 1000);
  return expiresAt.getTime() > now.getTime() ? expiresAt : null;
}
