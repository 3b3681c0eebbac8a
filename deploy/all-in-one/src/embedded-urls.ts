/**
 * The connection URLs of the embedded PostgreSQL, known before it starts: the credentials are
 * made once and kept in the data directory (mode 0600), so the URLs are defaults that config
 * parsing can use.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface EmbeddedUrls {
  readonly dir: string;
  /** Every embedded URL starts with this. */
  readonly prefix: string;
  url(db: string): string;
}

export interface EmbeddedCredentials {
  readonly user: string;
  readonly password: string;
}

export function loadOrCreateCredentials(dir: string): EmbeddedCredentials {
  const file = join(dir, 'credentials.json');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as EmbeddedCredentials;
  const creds = { user: 'iam', password: randomBytes(18).toString('base64url') };
  writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
  return creds;
}

export function embeddedUrls(dataDir: string, port: number): EmbeddedUrls {
  const dir = join(dataDir, 'postgres');
  const creds = loadOrCreateCredentials(dir);
  const prefix = `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/`;
  return { dir, prefix, url: (db) => `${prefix}${encodeURIComponent(db)}` };
}
