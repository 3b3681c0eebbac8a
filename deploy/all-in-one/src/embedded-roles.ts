/**
 * Least privilege on the embedded PostgreSQL, as the chart and compose set it up: per service a
 * database owned by its owner role (migrations) and a runtime role that may only connect (the
 * migration step grants it DML; audit's narrows it further). Run as the superuser before the
 * services start; idempotent: makes what is missing, keeps the passwords in step, and hands a
 * database an earlier `make run` made as the superuser (and every table, sequence and function
 * in it) over to its owner, so an existing .data directory carries on.
 */
import { Client } from 'pg';
import type { Logger } from '@iam/platform';
import type { EmbeddedDatabase } from './embedded-urls';

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Every object of schema public the owner does not own yet (extension members and column-owned sequences follow their owner). */
const HAND_OVER = `
  DO $$
  DECLARE
    r record;
    target text := current_setting('iam.new_owner');
  BEGIN
    FOR r IN
      SELECT c.oid::regclass AS obj, CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S') AND pg_get_userbyid(c.relowner) <> target
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
    LOOP
      EXECUTE format('ALTER %s %s OWNER TO %I', r.kind, r.obj, target);
    END LOOP;
    FOR r IN
      SELECT p.oid::regprocedure AS obj, CASE p.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END AS kind
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> target
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
      EXECUTE format('ALTER %s %s OWNER TO %I', r.kind, r.obj, target);
    END LOOP;
  END $$`;

async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Makes database `db` and its two roles ready (`serverUrl`: the superuser on any database of the
 * server; `dbUrl`: the superuser on `db`).
 */
export async function prepareEmbeddedDatabase(o: { serverUrl: string; dbUrl: string; db: string; roles: EmbeddedDatabase; logger: Logger }): Promise<void> {
  const { owner, runtime } = o.roles;
  await withClient(o.serverUrl, async (c) => {
    for (const r of [owner, runtime]) {
      const exists = (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [r.name])).rowCount;
      await c.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${ident(r.name)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${c.escapeLiteral(r.password)}`);
    }
    const exists = (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [o.db])).rowCount;
    if (exists) await c.query(`ALTER DATABASE ${ident(o.db)} OWNER TO ${ident(owner.name)}`);
    else await c.query(`CREATE DATABASE ${ident(o.db)} OWNER ${ident(owner.name)}`);
    await c.query(`REVOKE ALL ON DATABASE ${ident(o.db)} FROM PUBLIC`);
    await c.query(`GRANT CONNECT ON DATABASE ${ident(o.db)} TO ${ident(runtime.name)}`);
  });
  await withClient(o.dbUrl, async (c) => {
    await c.query('BEGIN');
    await c.query(`SELECT set_config('iam.new_owner', $1, true)`, [owner.name]);
    await c.query(HAND_OVER);
    await c.query('COMMIT');
  });
  o.logger.debug({ database: o.db, owner: owner.name, runtime: runtime.name }, 'embedded database: owner and runtime roles ready');
}
