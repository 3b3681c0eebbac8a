/**
 * TOTP (RFC 6238 over HOTP, RFC 4226) with node:crypto: HMAC-SHA-1, 6 digits, 30-second steps,
 * ±1 step of drift. Twenty lines of standard arithmetic, checked against the RFC's test vectors
 * (totp.test.ts), so no dependency is taken for it (README "Second factors").
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { base32Encode } from '@iam/platform';

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
/** Steps accepted either side of now. */
export const TOTP_WINDOW = 1;
/** 160-bit secrets, as RFC 4226 §4 recommends. */
const SECRET_BYTES = 20;

export { base32Decode, base32Encode } from '@iam/platform';

export function newTotpSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

/** HOTP (RFC 4226 §5.3) of `counter` with HMAC over `algorithm`, `digits` long. */
export function hotp(secret: Buffer, counter: number, digits = TOTP_DIGITS, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, secret).update(msg).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const bin = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(bin % 10 ** digits).padStart(digits, '0');
}

/** The time step of `atMs` (RFC 6238 §4: T = floor((now − T0) / X), T0 = 0). */
export function totpStep(atMs: number): number {
  return Math.floor(atMs / 1000 / TOTP_PERIOD_SECONDS);
}

const CODE_RE = /^\d{6}$/;

/**
 * The step whose code `code` is, within ±TOTP_WINDOW of `atMs` and after `lastStep` (a step
 * already used is refused: each code is accepted once); null when none. Every candidate is
 * compared in constant time.
 */
export function matchTotp(secret: Buffer, code: string, atMs: number, lastStep: number): number | null {
  if (!CODE_RE.test(code)) return null;
  const now = totpStep(atMs);
  let found: number | null = null;
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    const ok = timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(code));
    if (ok && step > lastStep && found === null) found = step;
  }
  return found;
}

/** The otpauth:// URI authenticator apps import (Key URI Format), as a QR code or a link. */
export function otpauthUri(secret: Buffer, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const q = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${q.toString()}`;
}
