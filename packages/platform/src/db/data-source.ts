/**
 * One TypeORM data source per service, on its own database. Schema changes only through
 * migrations (never `synchronize`), run under an advisory lock so replicas or Jobs starting
 * together migrate once: either as their own step (`<service> migrate`, with a role that may
 * change the schema, granting the runtime role DML only), or at start (make run, tests). A
 * process that does not migrate checks that every migration it knows is applied, and refuses
 * to start otherwise.
 */
import 'reflect-metadata';
import { AsyncResource } from 'node:async_hooks';
import { DataSource, type MixedList, type EntitySchema } from 'typeorm';
import type { Logger } from '../logger';
import { migrate, SchemaBehindError, verifySchema } from './migrations';
import { ensureDatabaseExists } from './provisioning';
import { TracedPgClient } from './traced-client';

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

export function createDataSource(opts: DatabaseOptions): DataSource {
  const ds = new DataSource({
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
  const initialize = ds.initialize.bind(ds);
  ds.initialize = async () => {
    await initialize();
    keepCallersContext(ds);
    return ds;
  };
  return ds;
}

type Callback = (...args: unknown[]) => void;

/**
 * pg-pool hands a freed connection to the next caller waiting for one by calling that caller's
 * callback from the code that freed it (pool.query, TypeORM's connect): the caller's query then
 * ran in the async context of whoever released the connection, with their trace and their query
 * deadline (a provider request's, cutting a gRPC handler's query short). The pool's `connect` binds
 * each callback to its caller's context.
 */
function keepCallersContext(ds: DataSource): void {
  const pool = (ds.driver as { master?: { connect?: (cb?: Callback) => unknown } }).master;
  const connect = pool?.connect?.bind(pool);
  if (!pool || !connect) return;
  pool.connect = (cb?: Callback) => connect(typeof cb === 'function' ? AsyncResource.bind(cb) : undefined);
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

function isConnectionError(err: unknown): boolean {
  if (err instanceof SchemaBehindError) return false;
  const code = (err as { code?: string }).code ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '57P01'].includes(code)
    || /timeout|terminat|connect/i.test((err as Error).message ?? '');
}
