/** What the console's walks share: a free port, an authenticator app's code, a token refresh seen. */
import { createHmac } from 'node:crypto';

/** The authenticator app's code now (RFC 6238: SHA-1, 6 digits, 30 s) for a base32 secret. */
export function totpCode(secret: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const key: number[] = [];
  for (const ch of secret) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      key.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000)));
  const mac = createHmac('sha1', Buffer.from(key)).update(counter).digest();
  const o = mac[mac.length - 1]! & 15;
  return String((mac.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
/** A refresh of the console's tokens at the OpenID provider (grant_type=refresh_token). */
export function isRefresh(r: { url(): string; request(): { postData(): string | null } }): boolean {
  return r.url().endsWith('/oidc/token') && (r.request().postData() ?? '').includes('grant_type=refresh_token');
}

export { freePort } from '@iam/platform/testing';
