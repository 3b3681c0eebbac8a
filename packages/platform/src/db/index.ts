/**
 * One TypeORM data source per service, on its own database. Schema changes only through
 * migrations (never `synchronize`), run under an advisory lock so replicas or Jobs starting
 * together migrate once: either as their own step (`<service> migrate`, with a role that may
 * change the schema, granting the runtime role DML only), or at start (make run, tests). A
 * process that does not migrate checks that every migration it knows is applied, and refuses
 * to start otherwise.
 */
import 'reflect-metadata';
import { SpanKind, TraceFlags, context, trace } from '@opentelemetry/api';
import { ATTR_DB_NAMESPACE, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_RESPONSE_STATUS_CODE, ATTR_DB_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';
import { Client } from 'pg';
import { DataSource, type EntityManager, type MixedList, type EntitySchema } from 'typeorm';
import type { Logger } from '../logger';
import { withTimeout } from '../health';
import { failSpan, startSpan } from '../trace';

export interface DatabaseOptions {
  /** postgres://user:pass@host:port/dbname */
  readonly url: string;
  /** Service name: application_name and the migration lock key. */
  readonly name: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for entity classes
  readonly entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for migration classes
  readonly migrations: MixedList<Function | string>;
  readonly logger: Logger;
  readonly poolSize?: number;
  /** Per-statement limit of the pool's connections (ms, default 15 s; 0: none, for migrations). */
  readonly statementTimeoutMs?: number;
}

/**
 * The pool's client class: a query made inside a sampled trace is a client span of its own
 * (`{operation} {database}`, with the statement text; parameter values are never recorded).
 * Queries outside any traced work (readiness pings, the outbox relay's polling) make none.
 * Given to pg-pool as its `Client` option, so no module is patched and it works the same
 * under `node` and jest.
 */
export class TracedPgClient extends Client {}

type AnyQuery = (this: Client, ...args: unknown[]) => unknown;
// eslint-disable-next-line @typescript-eslint/unbound-method -- pg's own query, always called with .apply on the client it runs for
const plainQuery = Client.prototype.query as unknown as AnyQuery;
const MAX_STATEMENT_CHARS = 2_000;

(TracedPgClient.prototype as unknown as { query: AnyQuery }).query = function tracedQuery(this: Client, ...args: unknown[]): unknown {
  const first = args[0] as { text?: unknown; submit?: unknown } | string | undefined;
  const streaming = typeof first === 'object' && first !== null && typeof first.submit === 'function';
  // Sampled, not merely recording: work a request left running in the background after its span ended is traced too.
  const parent = trace.getSpanContext(context.active());
  if (streaming || !parent || !(parent.traceFlags & TraceFlags.SAMPLED)) return plainQuery.apply(this, args);
  const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : '';
  const operation = /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  const params = (this as unknown as { connectionParameters?: { database?: string; application_name?: string } }).connectionParameters;
  const { span } = startSpan(`${operation} ${params?.database ?? 'postgresql'}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_DB_SYSTEM_NAME]: 'postgresql',
      [ATTR_DB_NAMESPACE]: params?.database ?? '',
      [ATTR_DB_OPERATION_NAME]: operation,
      [ATTR_DB_QUERY_TEXT]: text.length > MAX_STATEMENT_CHARS ? `${text.slice(0, MAX_STATEMENT_CHARS)}…` : text,
      ...(params?.application_name ? { 'iam.service': params.application_name } : {}),
    },
  });
  const done = (err: unknown): void => {
    if (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string') span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, code);
      failSpan(span, err);
    }
    span.end();
  };
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (err: unknown, res: unknown) => void;
    args[last] = (err: unknown, res: unknown) => {
      done(err);
      callback(err, res);
    };
    return plainQuery.apply(this, args);
  }
  return (plainQuery.apply(this, args) as Promise<unknown>).then(
    (res) => {
      done(undefined);
      return res;
    },
    (err: unknown) => {
      done(err);
      throw err;
    },
  );
};

export function createDataSource(opts: DatabaseOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: opts.url,
    applicationName: opts.name,
    entities: opts.entities,
    migrations: opts.migrations,
    migrationsTableName: 'schema_migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    extra: {
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: 3_000,
      idleTimeoutMillis: 30_000,
      // A runaway query cannot hold a connection for ever (migrations excepted: an index on a
      // large table takes minutes).
      statement_timeout: opts.statementTimeoutMs ?? 15_000,
      Client: TracedPgClient,
    },
  });
}

export interface OpenDatabaseOptions extends DatabaseOptions {
  readonly timeoutMs?: number;
  /**
   * true (default): create the database when missing (and the role may), then run pending
   * migrations. false: only check the schema is up to date (SchemaBehindError otherwise); the
   * runtime role then needs no DDL or CREATE DATABASE right.
   */
  readonly migrate?: boolean;
}

/**
 * Connects and migrates (or checks the schema, with `migrate: false`). Retries while the server
 * is unreachable, up to `timeoutMs`.
 */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<DataSource> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const migrating = opts.migrate ?? true;
  let delay = 250;
  for (;;) {
    try {
      if (migrating) await ensureDatabaseExists(opts.url, opts.logger);
      if (migrating) {
        // Migrations on connections of their own, without the statement limit.
        const mds = createDataSource({ ...opts, statementTimeoutMs: 0, poolSize: 2 });
        await mds.initialize();
        try {
          await migrate(mds, opts.name, opts.logger);
        } finally {
          await mds.destroy().catch(() => undefined);
        }
      }
      const ds = createDataSource(opts);
      await ds.initialize();
      try {
        if (!migrating) await verifySchema(ds, opts.name, opts.logger);
      } catch (err) {
        await ds.destroy().catch(() => undefined);
        throw err;
      }
      return ds;
    } catch (err) {
      if (!isConnectionError(err) || Date.now() + delay > deadline) throw err;
      opts.logger.warn({ err: (err as Error).message }, 'database not reachable yet; retrying');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 3_000);
    }
  }
}

/** Runs pending migrations under a session advisory lock, each in its own transaction. */
export async function migrate(ds: DataSource, name: string, logger: Logger): Promise<void> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`${name}:migrations`]);
    const applied = await ds.runMigrations({ transaction: 'each' });
    if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  } finally {
    await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`${name}:migrations`]).catch(() => undefined);
    await runner.release();
  }
}

/** The schema lacks migrations this code needs: the service must not start on it. */
export class SchemaBehindError extends Error {
  constructor(
    readonly service: string,
    readonly pending: readonly string[],
  ) {
    super(
      `the ${service} database schema is behind this version: ${pending.length} migration(s) not applied (${pending.join(', ')}). ` +
        `Run the migration step first, with a role that may change the schema: "node services/${service}/dist/main.js migrate" ` +
        `(make migrate; in Kubernetes the chart's pre-install/pre-upgrade Job), or set MIGRATE_ON_START=true for development.`,
    );
    this.name = 'SchemaBehindError';
  }
}

/** Names of the migrations `ds` knows that its database has not applied (schema_migrations). */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  const known = ds.migrations.map((m) => m.name ?? m.constructor.name);
  const [{ table }] = await ds.query<[{ table: string | null }]>(`SELECT to_regclass('schema_migrations')::text AS "table"`);
  if (!table) return known;
  const rows = await ds.query<Array<{ name: string }>>('SELECT name FROM schema_migrations');
  const applied = new Set(rows.map((r) => r.name));
  return known.filter((n) => !applied.has(n));
}

/**
 * Throws SchemaBehindError when a migration this code knows is not applied. Migrations the code
 * does not know (a newer version's, during a rolling upgrade) are fine: expand/contract keeps
 * the previous version working on the expanded schema.
 */
export async function verifySchema(ds: DataSource, service: string, logger: Logger): Promise<void> {
  const pending = await pendingMigrations(ds);
  if (pending.length > 0) throw new SchemaBehindError(service, pending);
  logger.debug({ migrations: ds.migrations.length }, 'database schema is up to date');
}

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

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The part of a pg pool used for named (prepared) statements. */
interface NamedStatements {
  query<R>(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

/**
 * Runs `text` on `m`: outside a transaction as the named statement `name` on TypeORM's pg pool
 * (its `master`), parsed and planned once per pool connection and without a query runner around
 * it (hot reads: a third to three quarters less time in PostgreSQL than unnamed, measured in the
 * directory and identity); inside a transaction, where every statement must go through its
 * connection, as a plain query. One name, one text: pg refuses a name reused with another text.
 */
export async function queryNamed<R>(m: EntityManager, name: string, text: string, values: unknown[]): Promise<R[]> {
  const pool = m.queryRunner ? undefined : (m.connection.driver as { master?: Partial<NamedStatements> }).master;
  if (typeof pool?.query !== 'function') return m.query<R[]>(text, values);
  return (await (pool as NamedStatements).query<R>({ name, text, values })).rows;
}

/** When each pool last got a client back without an error: the database answered then. */
const lastAnswers = new WeakMap<object, { at: number }>();

interface ReleasingPool {
  on(event: 'release', listener: (err: unknown) => void): unknown;
}

/** Whether the data source's pool got an answer from the database within the last `ms`. */
function answeredWithin(ds: DataSource, ms: number): boolean {
  const pool = (ds.driver as { master?: Partial<ReleasingPool> }).master;
  if (typeof pool?.on !== 'function') return false;
  let seen = lastAnswers.get(pool);
  if (!seen) {
    const fresh = { at: 0 };
    (pool as ReleasingPool).on('release', (err) => {
      if (!err) fresh.at = Date.now();
    });
    lastAnswers.set(pool, fresh);
    seen = fresh;
  }
  return Date.now() - seen.at < ms;
}

/**
 * Throws when the database does not answer in time (readiness). A database that answered one of
 * the pool's queries within the last `timeoutMs` is up: busy is not down. Under load the ping
 * itself would wait in the pool's queue behind the work, time out, and turn a busy service
 * unready (make soak: the directory went NOT_SERVING and logins answered 503).
 */
export async function pingDatabase(ds: DataSource, timeoutMs = 1_000): Promise<void> {
  if (answeredWithin(ds, timeoutMs)) return;
  await withTimeout(ds.query('SELECT 1'), timeoutMs, 'database ping');
}

function isConnectionError(err: unknown): boolean {
  if (err instanceof SchemaBehindError) return false;
  const code = (err as { code?: string }).code ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '57P01'].includes(code)
    || /timeout|terminat|connect/i.test((err as Error).message ?? '');
}

/** Escapes `%`, `_` and `\` so user text matches literally inside LIKE / ILIKE. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** PostgreSQL error code of a unique violation, for mapping to 409. */
export const UNIQUE_VIOLATION = '23505';

export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

export function pgConstraint(err: unknown): string | undefined {
  const e = err as { constraint?: string; driverError?: { constraint?: string } };
  return e?.driverError?.constraint ?? e?.constraint;
}
export * from './lookalike-keys';
