/**
 * Hashes without a standard string form arrive as `{algorithm, hash, salt, params}`; they are
 * stored in the string form Kratos uses for them (`$firescrypt$…`, `$sha256$pf=…`, `$hmac-…`,
 * `$pbkdf2-…$i=…,l=…`, `$scrypt$…`), so one parser reads every stored hash.
 */
import { refuse } from './codec';

export interface StructuredHash {
  readonly algorithm: string;
  readonly hash: string;
  readonly salt?: string;
  readonly params?: Readonly<Record<string, string | number>>;
}

const DIGEST_HEX: Record<string, number> = { md5: 32, md4: 32, sha1: 40, sha224: 56, sha256: 64, sha384: 96, sha512: 128 };

/** Algorithms whose hash is already a complete string (PHC or Modular Crypt). */
const STRING_FORMS = new Set(['bcrypt', 'argon2', 'argon2id', 'argon2i', 'argon2d', 'md5-crypt', 'md5crypt', 'apr1', 'sha256-crypt', 'sha512-crypt', 'sha256crypt', 'sha512crypt', 'ssha', 'ssha256', 'ssha512', 'phpass', 'drupal7', 'pbkdf2', 'scrypt-phc']);

const std = (s: string) => s.replace(/-/g, '+').replace(/_/g, '/');

/** Bytes given as hex (when the params say so, or a hex string of the digest's length) or base64. */
function bytesOf(value: string, encoding: unknown, what: string, hexLength?: number): Buffer {
  if (encoding === 'hex' || (encoding === undefined && hexLength !== undefined && value.length === hexLength && /^[0-9a-f]+$/i.test(value))) {
    if (!/^([0-9a-f]{2})*$/i.test(value)) refuse(`${what} is not hex`);
    return Buffer.from(value, 'hex');
  }
  if (encoding === 'utf8') return Buffer.from(value, 'utf8');
  if (encoding !== undefined && encoding !== 'base64') refuse(`${what} encoding must be hex, base64 or utf8`);
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) refuse(`${what} is not base64`);
  return Buffer.from(std(value), 'base64');
}

const num = (v: unknown, what: string): number => {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return refuse(`params.${what} must be a whole number`);
  return n;
};

/** The layouts people name instead of writing a Kratos `pf`. */
const LAYOUTS: Record<string, string> = { 'salt-password': '{SALT}{PASSWORD}', 'password-salt': '{PASSWORD}{SALT}' };

/** The stored string form of a structured hash; HashRefused when the algorithm is unknown or a part is missing. */
export function toStoredForm(h: StructuredHash): string {
  const p = h.params ?? {};
  const algorithm = h.algorithm.toLowerCase();
  const salt = (what = 'salt') => bytesOf(h.salt ?? refuse(`${algorithm} needs a salt`), p.saltEncoding, what).toString('base64');
  switch (algorithm) {
    case 'firebase-scrypt':
    case 'firebasescrypt': {
      const key = p.signerKey ?? refuse('firebase-scrypt needs params.signerKey');
      const sep = p.saltSeparator ?? refuse('firebase-scrypt needs params.saltSeparator');
      return `$firescrypt$ln=${num(p.memCost ?? p.memoryCost, 'memCost')},r=${num(p.rounds, 'rounds')},p=1$${salt()}$${bytesOf(h.hash, undefined, 'hash').toString('base64')}$${bytesOf(String(sep), undefined, 'saltSeparator').toString('base64')}$${bytesOf(String(key), undefined, 'signerKey').toString('base64')}`;
    }
    case 'md5':
    case 'sha1':
    case 'sha256':
    case 'sha512': {
      const hash = bytesOf(h.hash, p.hashEncoding, 'hash', DIGEST_HEX[algorithm]).toString('base64');
      if (h.salt === undefined) {
        if (algorithm !== 'md5') refuse(`unsalted ${algorithm} is not accepted; give a salt and params.layout`);
        return `$md5$${hash}`;
      }
      const layout = String(p.layout ?? 'salt-password');
      const pf = LAYOUTS[layout] ?? layout;
      if (!pf.includes('{PASSWORD}')) refuse('params.layout must contain {PASSWORD}');
      return `$${algorithm}$pf=${Buffer.from(pf, 'utf8').toString('base64')}$${salt()}$${hash}`;
    }
    case 'hmac-md4':
    case 'hmac-md5':
    case 'hmac-sha1':
    case 'hmac-sha224':
    case 'hmac-sha256':
    case 'hmac-sha384':
    case 'hmac-sha512': {
      const digest = algorithm.slice(5);
      const key = bytesOf(String(p.key ?? refuse(`${algorithm} needs params.key`)), p.keyEncoding ?? 'utf8', 'params.key');
      const hex = bytesOf(h.hash, p.hashEncoding, 'hash', DIGEST_HEX[digest]).toString('hex');
      return `$${algorithm}$${Buffer.from(hex, 'latin1').toString('base64')}$${key.toString('base64')}`;
    }
    case 'pbkdf2-sha1':
    case 'pbkdf2-sha256':
    case 'pbkdf2-sha512': {
      const hash = bytesOf(h.hash, p.hashEncoding, 'hash');
      return `$${algorithm}$i=${num(p.iterations, 'iterations')},l=${hash.length}$${salt()}$${hash.toString('base64')}`;
    }
    case 'scrypt': {
      const n = p.N ?? p.n ?? (p.ln === undefined ? refuse('scrypt needs params.N or params.ln') : 2 ** num(p.ln, 'ln'));
      const N = num(n, 'N');
      // The stored ln is N itself (Kratos) unless N is small enough to be read as a log2.
      return `$scrypt$ln=${N <= 31 ? Math.log2(N) : N},r=${num(p.r ?? 8, 'r')},p=${num(p.p ?? 1, 'p')}$${salt()}$${bytesOf(h.hash, p.hashEncoding, 'hash').toString('base64')}`;
    }
    default:
      // Families with a standard string need no structure: the hash is that string.
      if (STRING_FORMS.has(algorithm) && h.salt === undefined && h.params === undefined) return h.hash;
      return refuse(`unknown algorithm ${JSON.stringify(h.algorithm.slice(0, 40))}`);
  }
}
