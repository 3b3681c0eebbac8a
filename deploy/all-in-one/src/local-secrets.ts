/**
 * Secrets of the all-in-one mode that must survive restarts (the key that encrypts JWT signing
 * keys): made once, kept in the data directory with mode 0600. Production passes them in.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function loadOrCreateSecret(file: string, bytes = 32): Buffer {
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length === bytes) return key;
    throw new Error(`${file} does not hold base64 of ${bytes} bytes`);
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(bytes);
  writeFileSync(file, key.toString('base64'), { mode: 0o600 });
  return key;
}
