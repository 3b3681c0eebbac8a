/**
 * The connection URLs of the embedded PostgreSQL, known before it starts: the credentials are
 * made once and kept in the data directory (mode 0600), so the URLs are defaults that config
 * parsing can use. As in production, a service connects as a runtime role of its own and its
 * migrations run as the database's owner role (embedded-roles.ts makes both); the superuser is
 * used only to make them.
 */
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { type EmbeddedCredentials, loadOrCreateCredentials } from '@iam/platform/embedded-postgres';
import { loadOrCreateSecret } from './local-secrets';

export interface EmbeddedRole {
  readonly name: string;
  readonly password: string;
}

export interface EmbeddedDatabase {
  /** The owner: migrations, and every object of the database. */
  readonly owner: EmbeddedRole;
  /** What the service connects as (DML only, granted by the migration step). */
  readonly runtime: EmbeddedRole;
}

export interface EmbeddedUrls {
  readonly dir: string;
  /** The URL database `db`'s service connects with (its runtime role): the config default. */
  url(db: string): string;
  /** The same database as its owner role (the migration step). */
  ownerUrl(db: string): string;
  /** The same database as the superuser (making roles and databases only). */
  adminUrl(db: string): string;
  roles(db: string): EmbeddedDatabase;
}

export function embeddedUrls(dataDir: string, port: number): EmbeddedUrls {
  const dir = join(dataDir, 'postgres');
  const admin = loadOrCreateCredentials(dir);
  // The roles' passwords derive from one secret kept beside the superuser's credentials.
  const roleKey = loadOrCreateSecret(join(dir, 'roles.key'));
  const role = (name: string): EmbeddedRole => ({ name, password: createHmac('sha256', roleKey).update(name).digest('base64url') });
  const roles = (db: string): EmbeddedDatabase => ({ owner: role(`iam_${db}_owner`), runtime: role(`iam_${db}`) });
  const as = (r: EmbeddedCredentials | EmbeddedRole, db: string): string =>
    `postgres://${encodeURIComponent('user' in r ? r.user : r.name)}:${encodeURIComponent(r.password)}@127.0.0.1:${port}/${encodeURIComponent(db)}`;
  return {
    dir,
    url: (db) => as(roles(db).runtime, db),
    ownerUrl: (db) => as(roles(db).owner, db),
    adminUrl: (db) => as(admin, db),
    roles,
  };
}
