/** Decoding and comparison helpers shared by the hash families. */
import { timingSafeEqual } from 'node:crypto';

/** A stored hash the platform will not take: the reason is shown per import line. */
export class HashRefused extends Error {}

export const refuse = (reason: string): never => {
  throw new HashRefused(reason);
};

/**
 * Strict base64 (standard alphabet, padding optional): characters outside the alphabet and
 * non-canonical trailing bits are refused, as Go's `Strict()` decoders do.
 */
export function b64(s: string, what: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) refuse(`${what} is not base64`);
  const bare = s.replace(/=+$/, '');
  const buf = Buffer.from(bare, 'base64');
  if (buf.toString('base64').replace(/=+$/, '') !== bare) refuse(`${what} is not canonical base64`);
  return buf;
}

/** passlib's adapted base64 (`.` for `+`, no padding). */
export const ab64 = (s: string, what: string): Buffer => b64(s.replace(/\./g, '+'), what);

/** A decimal integer within [min, max], else refused with `what` named. */
export function int(s: string | undefined, what: string, min: number, max: number): number {
  if (s === undefined || !/^\d{1,10}$/.test(s)) return refuse(`${what} is not a number`);
  const n = Number(s);
  if (n < min) refuse(`${what} ${n} is below ${min}`);
  if (n > max) refuse(`${what} ${n} is above the limit of ${max}`);
  return n;
}

/**
 * Constant-time equality of two byte strings: the time depends on the expected length only
 * (a length mismatch still compares `expected` with itself, then answers false).
 */
export function ct(expected: Buffer, actual: Buffer): boolean {
  if (expected.length !== actual.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, actual);
}

/** Lets other work run between slices of a long synchronous loop (crypt rounds). */
export const yieldLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
