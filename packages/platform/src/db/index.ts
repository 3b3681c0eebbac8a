/**
 * One TypeORM data source per service, on its own database. Schema changes only through
 * migrations (never `synchronize`), run at start under an advisory lock so replicas starting
 * together migrate once.
 */
import 'reflect-metadata';
import { SpanKind, TraceFlags, context, trace } from '@opentelemetry/api';
import { ATTR_DB_NAMESPACE, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_RESPONSE_STATUS_CODE, ATTR_DB_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';
import { Client } from 'pg';
import { DataSource, type MixedList, type EntitySchema } from 'typeorm';
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
      // A runaway query cannot hold a connection for ever.
      statement_timeout: 15_000,
      Client: TracedPgClient,
    },
  });
}

/**
 * Connects, creating the database first when it does not exist (and the role may), then runs the
 * pending migrations. Retries while the server is unreachable, up to `timeoutMs`.
 */
export async function openDatabase(opts: DatabaseOptions & { timeoutMs?: number }): Promise<DataSource> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let delay = 250;
  for (;;) {
    try {
      await ensureDatabaseExists(opts.url, opts.logger);
      const ds = createDataSource(opts);
      await ds.initialize();
      try {
        await migrate(ds, opts.name, opts.logger);
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

/** Throws when the database does not answer `SELECT 1` in time (readiness). */
export async function pingDatabase(ds: DataSource, timeoutMs = 1_000): Promise<void> {
  await withTimeout(ds.query('SELECT 1'), timeoutMs, 'database ping');
}

function isConnectionError(err: unknown): boolean {
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
