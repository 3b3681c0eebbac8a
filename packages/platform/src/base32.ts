/**
 * RFC 4648 base32 (the alphabet authenticator apps and otpauth URIs use), shared by identity's
 * TOTP secrets and the directory's importers (a Keycloak export's OTP secrets).
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Base32 without padding. */
export function base32Encode(data: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of data) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** The bytes of base32 text (either case; spaces and padding ignored); null when it is not base32. */
export function base32Decode(text: string): Buffer | null {
  const s = text.replace(/[\s=]/g, '').toUpperCase();
  if (!/^[A-Z2-7]*$/.test(s)) return null;
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of s) {
    value = ((value << 5) | ALPHABET.indexOf(ch)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
