/**
 * What the migrating role does beside migrations: create the service's database when missing, and
 * grant the runtime role DML only.
 */
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';
import { quoteIdent } from './sql-text';

/**
 * Gives `role` what the service needs at run time and nothing more: DML on every table and
 * sequence of the public schema, now and for tables the migrating role creates later. No DDL,
 * no CREATE on the schema or the database.
 */
export async function grantRuntimeRole(ds: DataSource, role: string, logger: Logger): Promise<void> {
  const r = quoteIdent(role);
  await ds.transaction(async (m) => {
    await m.query(`GRANT CONNECT ON DATABASE ${quoteIdent(ds.driver.database ?? '')} TO ${r}`);
    await m.query(`GRANT USAGE ON SCHEMA public TO ${r}`);
    await m.query(`REVOKE CREATE ON SCHEMA public FROM ${r}`);
    await m.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${r}`);
    await m.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ${r}`);
    await m.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${r}`);
    await m.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO ${r}`);
  });
  logger.info({ role }, 'runtime role granted DML on the schema');
}

/** Creates the database named in `url` when it is missing; no-op when it exists. */
export async function ensureDatabaseExists(url: string, logger: Logger): Promise<void> {
  const target = new URL(url);
  const dbName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const probe = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await probe.connect();
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${quoteIdent(dbName)}`);
    logger.info({ database: dbName }, 'database created');
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err; // created concurrently
  } finally {
    await client.end();
  }
}
