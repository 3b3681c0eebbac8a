/**
 * Every password-hash family Ory Kratos reads (hash/hash_comparator.go), in the string forms
 * Kratos, ZITADEL's passwap, passlib and Django write, plus phpass and Drupal 7. `parseHash`
 * checks a stored string completely (format, encodings, cost limits) so an import refuses what
 * could never verify or would take too long at sign-in; `verify` compares in constant time.
 * Every family here is verify-only: new hashes are always the platform's argon2id.
 */
import { createCipheriv, createHash, createHmac, pbkdf2, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import * as argon2 from 'argon2';
import { verify as bcryptVerify } from '@node-rs/bcrypt';
import { HashRefused, ab64, b64, ct, int, refuse } from './codec';
import { md5Crypt, phpassCrypt, phpassLog2, shaCrypt } from './crypt';
import { hmacMd4 } from './md4';

export { HashRefused };

/**
 * Costs above these are refused at import (a sign-in must not hang on them): a bcrypt cost of 31
 * or PBKDF2 with 10^9 iterations would take hours. Each is well above what the source systems
 * write by default (bcrypt 10–12, PBKDF2-SHA256 27,500–600,000, scrypt 2^14–2^17).
 */
export const COST_LIMITS = {
  bcryptCost: 15,
  pbkdf2Iterations: 5_000_000,
  scryptMemoryBytes: 256 * 1024 * 1024,
  scryptParallelism: 16,
  argon2MemoryKiB: 1_048_576,
  argon2Iterations: 20,
  argon2Parallelism: 16,
  shaCryptRounds: 1_000_000,
  phpassLog2: 20,
} as const;

export interface ParsedHash {
  /** The family's name as reported (metrics, import answers). */
  readonly family: string;
  /** MD5/SHA-1-era families: verified on import's behalf, never trusted beyond the first sign-in. */
  readonly weak: boolean;
  verify(password: Buffer): Promise<boolean>;
}

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (pw: Buffer, salt: Buffer, len: number, o: { N: number; r: number; p: number; maxmem: number }) => Promise<Buffer>;
const DIGEST_BYTES: Record<string, number> = { md5: 16, sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

function scryptCost(nOrLog: number, r: number, p: number, what: string): { N: number; maxmem: number } {
  // ln: the log2 of N (passlib, passwap) when small, N itself (Kratos) otherwise.
  const N = nOrLog <= 31 ? 2 ** nOrLog : nOrLog;
  if (N < 2 || (N & (N - 1)) !== 0) refuse(`${what} N must be a power of two`);
  const memory = 128 * N * r;
  if (memory > COST_LIMITS.scryptMemoryBytes) refuse(`${what} needs ${memory} bytes of memory, above the limit of ${COST_LIMITS.scryptMemoryBytes}`);
  if (p > COST_LIMITS.scryptParallelism) refuse(`${what} parallelism ${p} is above the limit of ${COST_LIMITS.scryptParallelism}`);
  return { N, maxmem: memory * 2 + 1024 * 1024 };
}

/** `layout` with {SALT} and {PASSWORD} replaced (Kratos's `pf`), as bytes. */
function salted(layout: string, salt: Buffer, password: Buffer): Buffer {
  return Buffer.concat(layout.split(/(\{SALT\}|\{PASSWORD\})/).map((part) => (part === '{SALT}' ? salt : part === '{PASSWORD}' ? password : Buffer.from(part, 'utf8'))));
}

function layoutOf(pf: string): string {
  const layout = b64(pf, 'pf').toString('utf8');
  if (!layout.includes('{PASSWORD}')) refuse('pf must contain {PASSWORD}');
  return layout;
}

type Parser = (m: RegExpMatchArray, s: string) => ParsedHash;

const argon2Family: Parser = (m, s) => {
  const [, type, v, mem, t, p, salt, hash] = m;
  if (v !== undefined && v !== '19' && v !== '16') refuse(`argon2 version ${v} is unknown`);
  const memory = int(mem, 'argon2 memory', 1, COST_LIMITS.argon2MemoryKiB);
  int(t, 'argon2 iterations', 1, COST_LIMITS.argon2Iterations);
  const par = int(p, 'argon2 parallelism', 1, COST_LIMITS.argon2Parallelism);
  if (memory < 8 * par) refuse('argon2 memory must be at least 8 KiB per lane');
  if (b64(salt!, 'argon2 salt').length < 8) refuse('argon2 salt must be at least 8 bytes');
  if (b64(hash!, 'argon2 hash').length < 4) refuse('argon2 hash is too short');
  return { family: `argon2${type}`, weak: false, verify: (pw) => argon2.verify(s, pw).catch(() => false) };
};

const bcryptFamily: Parser = (m, s) => {
  const [, variant, cost] = m;
  if (variant === '2x' || variant === '2') refuse(`bcrypt $${variant}$ is not supported (only $2a$, $2b$ and $2y$)`);
  int(cost, 'bcrypt cost', 4, COST_LIMITS.bcryptCost);
  // Rust's bcrypt in libuv's thread pool (not the event loop); it reads $2a$, $2b$ and $2y$.
  return { family: 'bcrypt', weak: false, verify: (pw) => bcryptVerify(pw, s).catch(() => false) };
};

function pbkdf2Of(digest: string, iterations: number, salt: Buffer, hash: Buffer, family = `pbkdf2-${digest}`): ParsedHash {
  if (!(digest in DIGEST_BYTES) || digest === 'md5') refuse(`PBKDF2 digest ${digest} is unknown`);
  if (hash.length < 8 || hash.length > 256) refuse('PBKDF2 key length must be 8 to 256 bytes');
  return { family, weak: false, verify: async (pw) => ct(hash, await pbkdf2Async(pw, salt, iterations, hash.length, digest)) };
}

const scryptOf = (N: number, r: number, p: number, maxmem: number, salt: Buffer, hash: Buffer): ParsedHash => {
  if (hash.length < 8 || hash.length > 256) refuse('scrypt key length must be 8 to 256 bytes');
  return { family: 'scrypt', weak: false, verify: async (pw) => ct(hash, await scryptAsync(pw, salt, hash.length, { N, r, p, maxmem })) };
};

const firebaseFamily: Parser = (m) => {
  const [, ln, r, p, salt, hash, sep, key] = m;
  const memCost = int(ln, 'firebase mem_cost', 1, 20);
  const rounds = int(r, 'firebase rounds', 1, 32);
  const par = p === undefined ? 1 : int(p, 'firebase parallelism', 1, 16);
  const { N, maxmem } = scryptCost(memCost, rounds, par, 'firebase scrypt');
  const saltB = Buffer.concat([b64(salt!, 'firebase salt'), b64(sep!, 'firebase salt separator')]);
  const expected = b64(hash!, 'firebase hash');
  const signer = b64(key!, 'firebase signer key');
  if (signer.length === 0 || expected.length !== signer.length) refuse('firebase hash and signer key must have the same length');
  return {
    family: 'firebase-scrypt',
    weak: false,
    async verify(pw) {
      const derived = await scryptAsync(pw, saltB, 32, { N, r: rounds, p: par, maxmem });
      const cipher = createCipheriv('aes-256-ctr', derived, Buffer.alloc(16));
      return ct(expected, Buffer.concat([cipher.update(signer), cipher.final()]));
    },
  };
};

const md5CryptFamily: Parser = (m) => {
  const [, id, salt, sum] = m;
  const magic = id === 'apr1' ? '$apr1$' : '$1$';
  return { family: id === 'apr1' ? 'apr1' : 'md5-crypt', weak: true, verify: async (pw) => ct(Buffer.from(`${magic}${salt}$${sum}`), Buffer.from(md5Crypt(pw, salt!, magic))) };
};

const shaCryptFamily: Parser = (m) => {
  const [, id, rounds, salt, sum] = m;
  const alg = id === '5' || id === 'sha256-crypt' ? 'sha256' : 'sha512';
  if (sum!.length !== (alg === 'sha256' ? 43 : 86)) refuse(`${alg}-crypt checksum has the wrong length`);
  const r = rounds === undefined ? 5000 : int(rounds, `${alg}-crypt rounds`, 1, COST_LIMITS.shaCryptRounds);
  return {
    family: `${alg}-crypt`,
    weak: false,
    verify: async (pw) => ct(Buffer.from(sum!), Buffer.from((await shaCrypt(alg, pw, salt!, r, rounds !== undefined)).split('$').pop()!)),
  };
};

const sshaFamily: Parser = (m) => {
  const [, kind, body] = m;
  const alg = kind === 'SSHA' ? 'sha1' : kind === 'SSHA256' ? 'sha256' : 'sha512';
  const raw = b64(body!, `{${kind}} value`);
  const n = DIGEST_BYTES[alg]!;
  if (raw.length <= n) refuse(`{${kind}} value has no salt`);
  const hash = raw.subarray(0, n);
  const salt = raw.subarray(n);
  return { family: `ssha-${alg}`, weak: true, verify: async (pw) => ct(hash, createHash(alg).update(pw).update(salt).digest()) };
};

const saltedShaFamily: Parser = (m) => {
  const [, alg, pf, salt, hash] = m;
  const layout = layoutOf(pf!);
  const saltB = b64(salt!, 'salt');
  const expected = b64(hash!, 'hash');
  if (expected.length !== DIGEST_BYTES[alg!]) refuse(`${alg} hash has the wrong length`);
  return { family: alg === 'md5' ? 'md5-salted' : `salted-${alg}`, weak: true, verify: async (pw) => ct(expected, createHash(alg!).update(salted(layout, saltB, pw)).digest()) };
};

const md5PlainFamily: Parser = (m) => {
  const expected = b64(m[1]!, 'md5 hash');
  if (expected.length !== 16) refuse('md5 hash has the wrong length');
  return { family: 'md5', weak: true, verify: async (pw) => ct(expected, createHash('md5').update(pw).digest()) };
};

const hmacFamily: Parser = (m) => {
  const [, alg, hash, key] = m;
  // Kratos stores the base64 of the lower-case hex digest.
  const hex = b64(hash!, 'HMAC hash').toString('latin1');
  if (!/^[0-9a-f]+$/i.test(hex) || hex.length !== 2 * DIGEST_BYTES[alg === 'md4' ? 'md5' : alg!]!) refuse(`HMAC-${alg} hash has the wrong length`);
  const k = b64(key!, 'HMAC key');
  if (k.length === 0) refuse('HMAC key is empty');
  const expected = Buffer.from(hex.toLowerCase(), 'latin1');
  const mac = (pw: Buffer) => (alg === 'md4' ? hmacMd4(k, pw) : createHmac(alg!, k).update(pw).digest());
  return { family: `hmac-${alg}`, weak: true, verify: async (pw) => ct(expected, Buffer.from(mac(pw).toString('hex'), 'latin1')) };
};

const phpassFamily: Parser = (m, s) => {
  const [, id, , , sum] = m;
  const log2 = phpassLog2(s);
  if (log2 < 7) refuse('phpass iteration count is below 2^7');
  if (log2 > COST_LIMITS.phpassLog2) refuse(`phpass iteration count 2^${log2} is above the limit of 2^${COST_LIMITS.phpassLog2}`);
  if (sum!.length !== (id === 'S' ? 43 : 22)) refuse('phpass checksum has the wrong length');
  return { family: id === 'S' ? 'drupal7' : 'phpass', weak: id !== 'S', verify: async (pw) => ct(Buffer.from(s), Buffer.from(await phpassCrypt(pw, s.slice(0, 12)))) };
};

const C64 = '[./0-9A-Za-z]';
const B64 = '[A-Za-z0-9+/]+={0,2}';
const B64E = '[A-Za-z0-9+/]*={0,2}';

/** Recognisers in order: the first whose prefix matches decides (a bad match is refused, not passed on). */
const FAMILIES: ReadonlyArray<{ prefix: RegExp; form: RegExp; name: string; parse: Parser }> = [
  { name: 'argon2', prefix: /^\$argon2(id|i|d)\$/, form: new RegExp(`^\\$argon2(id|i|d)\\$(?:v=(\\d+)\\$)?m=(\\d+),t=(\\d+),p=(\\d+)\\$(${B64})\\$(${B64})$`), parse: argon2Family },
  { name: 'bcrypt', prefix: /^\$2[abxy]?\$/, form: new RegExp(`^\\$(2[abxy]?)\\$(\\d\\d)\\$${C64}{53}$`), parse: bcryptFamily },
  {
    name: 'pbkdf2',
    prefix: /^\$pbkdf2-[a-z0-9]+\$i=/,
    form: new RegExp(`^\\$pbkdf2-([a-z0-9]+)\\$i=(\\d+),l=(\\d+)\\$(${B64})\\$(${B64})$`),
    parse: (m) => {
      const hash = b64(m[5]!, 'PBKDF2 hash');
      if (hash.length !== int(m[3], 'PBKDF2 key length', 1, 256)) refuse('PBKDF2 key length does not match the hash');
      return pbkdf2Of(m[1]!, int(m[2], 'PBKDF2 iterations', 1, COST_LIMITS.pbkdf2Iterations), b64(m[4]!, 'PBKDF2 salt'), hash);
    },
  },
  {
    name: 'pbkdf2 (passlib)',
    prefix: /^\$pbkdf2(-sha256|-sha512)?\$\d/,
    form: new RegExp(`^\\$pbkdf2(?:-(sha256|sha512))?\\$(\\d+)\\$(${C64}+)\\$(${C64}+)$`),
    parse: (m) => pbkdf2Of(m[1] ?? 'sha1', int(m[2], 'PBKDF2 iterations', 1, COST_LIMITS.pbkdf2Iterations), ab64(m[3]!, 'PBKDF2 salt'), ab64(m[4]!, 'PBKDF2 hash')),
  },
  {
    name: 'pbkdf2 (Django)',
    prefix: /^pbkdf2_sha(1|256)\$/,
    form: new RegExp(`^pbkdf2_(sha1|sha256)\\$(\\d+)\\$([!-#%-~]{1,128})\\$(${B64})$`),
    parse: (m) => pbkdf2Of(m[1]!, int(m[2], 'PBKDF2 iterations', 1, COST_LIMITS.pbkdf2Iterations), Buffer.from(m[3]!, 'utf8'), b64(m[4]!, 'PBKDF2 hash')),
  },
  {
    name: 'scrypt',
    prefix: /^\$scrypt\$/,
    form: new RegExp(`^\\$scrypt\\$ln=(\\d+),r=(\\d+),p=(\\d+)\\$(${B64})\\$(${B64})$`),
    parse: (m) => {
      const r = int(m[2], 'scrypt r', 1, 64);
      const p = int(m[3], 'scrypt p', 1, 64);
      const { N, maxmem } = scryptCost(int(m[1], 'scrypt ln', 1, 2 ** 30), r, p, 'scrypt');
      return scryptOf(N, r, p, maxmem, b64(m[4]!, 'scrypt salt'), b64(m[5]!, 'scrypt hash'));
    },
  },
  { name: 'firebase-scrypt', prefix: /^\$(firescrypt|firebasescrypt)\$/, form: new RegExp(`^\\$(?:firescrypt|firebasescrypt)\\$ln=(\\d+),r=(\\d+)(?:,p=(\\d+))?\\$(${B64E})\\$(${B64})\\$(${B64E})\\$(${B64})$`), parse: firebaseFamily },
  { name: 'md5-crypt', prefix: /^\$(1|apr1|md5-crypt)\$/, form: new RegExp(`^\\$(1|apr1|md5-crypt)\\$(${C64}{0,8})\\$(${C64}{22})$`), parse: md5CryptFamily },
  { name: 'sha-crypt', prefix: /^\$(5|6|sha256-crypt|sha512-crypt)\$/, form: new RegExp(`^\\$(5|6|sha256-crypt|sha512-crypt)\\$(?:rounds=(\\d+)\\$)?(${C64}{0,16})\\$(${C64}{43}|${C64}{86})$`), parse: shaCryptFamily },
  { name: 'ssha', prefix: /^\{SSHA(256|512)?\}/, form: new RegExp(`^\\{(SSHA|SSHA256|SSHA512)\\}(${B64})$`), parse: sshaFamily },
  { name: 'salted sha', prefix: /^\$(sha1|sha256|sha512)\$/, form: new RegExp(`^\\$(sha1|sha256|sha512)\\$pf=(${B64})\\$(${B64E})\\$(${B64})$`), parse: saltedShaFamily },
  {
    name: 'md5',
    prefix: /^\$md5\$/,
    form: new RegExp(`^\\$md5\\$(?:(${B64})|pf=(${B64})\\$(${B64E})\\$(${B64}))$`),
    parse: (m, s) => (m[1] !== undefined ? md5PlainFamily(m, s) : saltedShaFamily(['', 'md5', m[2]!, m[3]!, m[4]!] as unknown as RegExpMatchArray, s)),
  },
  { name: 'hmac', prefix: /^\$hmac-/, form: new RegExp(`^\\$hmac-(md4|md5|sha1|sha224|sha256|sha384|sha512)\\$(${B64})\\$(${B64E})$`), parse: hmacFamily },
  { name: 'phpass', prefix: /^\$(P|H|S)\$/, form: new RegExp(`^\\$(P|H|S)\\$(${C64})(${C64}{8})(${C64}+)$`), parse: phpassFamily },
];

/**
 * The family of a stored hash, fully checked; HashRefused (with the reason) for an unknown
 * format, a malformed or truncated value, or a cost above COST_LIMITS.
 */
export function parseHash(stored: string): ParsedHash {
  if (stored.length > 4096) refuse('the hash is longer than 4096 characters');
  if (/\p{Cc}/u.test(stored)) refuse('the hash contains control characters');
  const family = FAMILIES.find((f) => f.prefix.test(stored));
  if (!family) return refuse('unknown hash format');
  const m = stored.match(family.form);
  if (!m) return refuse(`malformed or truncated ${family.name} hash`);
  return family.parse(m, stored);
}
