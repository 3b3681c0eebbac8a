/**
 * The bench's own PostgreSQL (`BENCH_PG=own`, issue #25): a server started from the system's
 * binaries (BENCH_PG_BIN, default /usr/lib/postgresql/15/bin) on its own data directory
 * (`.data/bench-pg`, kept across runs so the seeded users are reused) and port, sized for the
 * data it serves as a production deployment would be: `shared_buffers` (BENCH_PG_SHARED_BUFFERS,
 * default 1GB) holds the users table of the 1,000,000-user search and all its indexes (217 MB
 * of heap, 69 MB of trigram index and 330 MB of b-trees: 615 MB), `effective_cache_size` says the
 * rest of memory caches too, and the plans run without JIT or parallel workers (each search is a
 * few milliseconds; four clients on two cores would only queue behind workers). Everything else
 * is the default. As root the server runs as the `postgres` OS user (initdb refuses root).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './system';

export interface OwnPg {
  /** postgres://… of a database on this server. */
  url(db: string): string;
  /** How it is configured, for the report. */
  readonly describe: string;
  stop(): void;
}

export interface OwnPgOptions {
  readonly port: number;
  readonly sharedBuffers: string;
  readonly bin?: string;
  readonly dir?: string;
  readonly log?: (s: string) => void;
}

/** The command line as the postgres OS user when this process is root. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

function run(cmd: string, args: string[]): string {
  const [c, a] = asPostgres(cmd, args);
  return execFileSync(c, a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts the server (initialising its directory the first time); stop() stops it. */
export function startOwnPg(o: OwnPgOptions): OwnPg {
  const bin = o.bin ?? '/usr/lib/postgresql/15/bin';
  const dir = o.dir ?? join(ROOT, '.data', 'bench-pg');
  const log = o.log ?? (() => undefined);
  const settings: Record<string, string> = {
    port: String(o.port),
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    shared_buffers: o.sharedBuffers,
    effective_cache_size: '4GB',
    max_connections: '100',
    jit: 'off',
    max_parallel_workers_per_gather: '0',
  };
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
      // The postgres user must pass through the folders above it: `.data` is made 0700 by
      // whichever process makes it first (the all-in-one's data). Passing, not listing: o+x.
      for (let p = dirname(dir); p.startsWith(ROOT) && p !== ROOT; p = dirname(p)) chmodSync(p, statSync(p).mode | 0o001);
    }
    log(`initdb ${dir}`);
    run(join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']);
  }
  const opts = Object.entries(settings)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
  run(join(bin, 'pg_ctl'), ['-D', dir, '-l', join(dir, 'server.log'), '-o', opts, '-w', '-t', '120', 'start']);
  const describe = `own PostgreSQL 15 (${bin}) on 127.0.0.1:${o.port}, data ${dir}: shared_buffers=${o.sharedBuffers}, effective_cache_size=4GB, jit=off, max_parallel_workers_per_gather=0, otherwise defaults`;
  log(describe);
  return {
    url: (db) => `postgres://postgres@127.0.0.1:${o.port}/${db}`,
    describe,
    stop: () => {
      run(join(bin, 'pg_ctl'), ['-D', dir, '-m', 'fast', '-w', 'stop']);
    },
  };
}
