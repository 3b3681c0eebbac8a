/**
 * The crypt(3) families Kratos and ZITADEL read that no well-kept package covers with a small
 * footprint, built on node:crypto digests: md5-crypt (`$1$`, Apache's `$apr1$`), SHA-crypt
 * (`$5$`, `$6$`, Drepper's specification) and phpass (WordPress `$P$`/`$H$`, Drupal 7 `$S$`).
 * Each returns the full encoded string; the caller compares it in constant time.
 */
import { createHash } from 'node:crypto';
import { yieldLoop } from './codec';

/** Rounds between two yields of the event loop: long crypt loops never hold it for more than a few ms. */
const SLICE = 4096;

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const digest = (alg: string, ...parts: Buffer[]): Buffer => {
  const h = createHash(alg);
  for (const p of parts) h.update(p);
  return h.digest();
};

/** crypt's little-endian 6-bit groups of three bytes (b2 the high byte), `n` characters. */
function to64(b2: number, b1: number, b0: number, n: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let out = '';
  for (let i = 0; i < n; i++) {
    out += ITOA64[w & 0x3f];
    w >>= 6;
  }
  return out;
}

/** md5-crypt; `magic` is `$1$` or `$apr1$`, `salt` at most 8 characters. */
export function md5Crypt(password: Buffer, salt: string, magic: string): string {
  const s = Buffer.from(salt.slice(0, 8), 'latin1');
  const alt = digest('md5', password, s, password);
  const ctx = createHash('md5').update(password).update(magic).update(s);
  for (let i = password.length; i > 0; i -= 16) ctx.update(alt.subarray(0, Math.min(16, i)));
  for (let i = password.length; i > 0; i >>= 1) ctx.update(i & 1 ? Buffer.from([0]) : password.subarray(0, 1));
  let f = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const c = createHash('md5');
    c.update(i & 1 ? password : f);
    if (i % 3) c.update(s);
    if (i % 7) c.update(password);
    c.update(i & 1 ? f : password);
    f = c.digest();
  }
  const enc =
    to64(f[0]!, f[6]!, f[12]!, 4) + to64(f[1]!, f[7]!, f[13]!, 4) + to64(f[2]!, f[8]!, f[14]!, 4) +
    to64(f[3]!, f[9]!, f[15]!, 4) + to64(f[4]!, f[10]!, f[5]!, 4) + to64(0, 0, f[11]!, 2);
  return `${magic}${salt.slice(0, 8)}$${enc}`;
}

const SHA256_ORDER = [[0, 10, 20], [21, 1, 11], [12, 22, 2], [3, 13, 23], [24, 4, 14], [15, 25, 5], [6, 16, 26], [27, 7, 17], [18, 28, 8], [9, 19, 29]] as const;

const sha512Order = (): number[][] => {
  const out: number[][] = [];
  for (let i = 0; i < 21; i++) {
    const t = [i, i + 21, i + 42];
    out.push(i % 3 === 0 ? t : i % 3 === 1 ? [t[1]!, t[2]!, t[0]!] : [t[2]!, t[0]!, t[1]!]);
  }
  return out;
};
const SHA512_ORDER = sha512Order();

/** `n` bytes of `block` repeated. */
const repeatTo = (block: Buffer, n: number): Buffer => {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i += block.length) block.copy(out, i, 0, Math.min(block.length, n - i));
  return out;
};

/**
 * SHA-crypt (`$5$` sha256, `$6$` sha512). `rounds` is clamped to 1000..999999999 as the
 * specification says; `explicitRounds` writes `rounds=N$` into the result as the input had it.
 */
export async function shaCrypt(alg: 'sha256' | 'sha512', password: Buffer, salt: string, rounds: number, explicitRounds: boolean): Promise<string> {
  const len = alg === 'sha256' ? 32 : 64;
  const s = Buffer.from(salt.slice(0, 16), 'latin1');
  const r = Math.min(999_999_999, Math.max(1000, rounds));
  const b = digest(alg, password, s, password);
  const a = createHash(alg).update(password).update(s);
  let i = password.length;
  for (; i > len; i -= len) a.update(b);
  a.update(b.subarray(0, i));
  for (let n = password.length; n > 0; n >>= 1) a.update(n & 1 ? b : password);
  let c = a.digest();
  const dp = createHash(alg);
  for (let n = 0; n < password.length; n++) dp.update(password);
  const p = repeatTo(dp.digest(), password.length);
  const ds = createHash(alg);
  for (let n = 0; n < 16 + c[0]!; n++) ds.update(s);
  const sp = repeatTo(ds.digest(), s.length);
  for (let n = 0; n < r; n++) {
    if (n % SLICE === SLICE - 1) await yieldLoop();
    const h = createHash(alg);
    h.update(n & 1 ? p : c);
    if (n % 3) h.update(sp);
    if (n % 7) h.update(p);
    h.update(n & 1 ? c : p);
    c = h.digest();
  }
  let enc = '';
  if (alg === 'sha256') {
    for (const [x, y, z] of SHA256_ORDER) enc += to64(c[x]!, c[y]!, c[z]!, 4);
    enc += to64(0, c[31]!, c[30]!, 3);
  } else {
    for (const [x, y, z] of SHA512_ORDER) enc += to64(c[x!]!, c[y!]!, c[z!]!, 4);
    enc += to64(0, 0, c[63]!, 2);
  }
  const magic = alg === 'sha256' ? '$5$' : '$6$';
  return `${magic}${explicitRounds ? `rounds=${r}$` : ''}${s.toString('latin1')}$${enc}`;
}

/** phpass's own base64 of `count` bytes. */
function phpassEncode(input: Buffer, count: number): string {
  let out = '';
  let i = 0;
  do {
    let value = input[i++]!;
    out += ITOA64[value & 0x3f];
    if (i < count) value |= input[i]! << 8;
    out += ITOA64[(value >> 6) & 0x3f];
    if (i++ >= count) break;
    if (i < count) value |= input[i]! << 16;
    out += ITOA64[(value >> 12) & 0x3f];
    if (i++ >= count) break;
    out += ITOA64[(value >> 18) & 0x3f];
  } while (i < count);
  return out;
}

/** The log2 of a phpass setting's iteration count (its 4th character), -1 when not a crypt64 character. */
export const phpassLog2 = (setting: string): number => ITOA64.indexOf(setting[3] ?? '');

/**
 * phpass portable hashes: `$P$`/`$H$` (md5, WordPress, phpBB) and Drupal 7's `$S$` (sha512,
 * truncated to 55 characters). `setting` is the first 12 characters of the stored hash.
 */
export async function phpassCrypt(password: Buffer, setting: string): Promise<string> {
  const alg = setting.startsWith('$S$') ? 'sha512' : 'md5';
  const count = 2 ** phpassLog2(setting);
  const salt = Buffer.from(setting.slice(4, 12), 'latin1');
  let h = digest(alg, salt, password);
  for (let n = 0; n < count; n++) {
    if (n % SLICE === SLICE - 1) await yieldLoop();
    h = digest(alg, h, password);
  }
  const out = setting.slice(0, 12) + phpassEncode(h, h.length);
  return alg === 'sha512' ? out.slice(0, 55) : out;
}

/** crypt64 characters only (salts and checksums of the crypt families). */
export const isCrypt64 = (s: string): boolean => /^[./0-9A-Za-z]*$/.test(s);
