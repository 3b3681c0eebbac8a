/**
 * `make figures`: the README's "two commands" figures, measured as a newcomer meets them and
 * written into README.md between `<!-- figures:start -->` and `<!-- figures:end -->`
 * (`--print` only prints them).
 *
 *   1. a fresh `git clone` of this repository's HEAD, then `make run` in it, to /health/ready 200:
 *      each step timed (`make install`: npm ci, and Node 24 fetched when the host's is older;
 *      `make build`; the first start: initdb, migrations); npm's cache is a new empty one unless
 *      FIGURES_NPM_CACHE=warm, and PATH is the caller's without tools/node, as on a new machine;
 *   2. the next start, `make run` again in the same clone (nothing to install or build), median of 3;
 *   3. at rest 10 s after that start: the Node process's RSS, and the embedded PostgreSQL's
 *      processes, their proportional set size summed (shared buffers counted once).
 *
 * `make run` is interrupted as a terminal does (SIGINT to its process group) between starts.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { median } from './load';
import { ROOT, freePorts } from './system';

const MARK_START = '<!-- figures:start -->';
const MARK_END = '<!-- figures:end -->';

const env = (cache: string): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'warn', CI: '' };
  for (const k of Object.keys(e)) if (/_(DATABASE_URL|GRPC_PORT|GRPC_TARGET)$|^(NATS_URL|PORT|DATA_DIR|EMBEDDED_PG_PORT)$/.test(k)) delete e[k];
  e.PATH = (e.PATH ?? '').split(delimiter).filter((p) => !p.includes(join('tools', 'node'))).join(delimiter);
  if (cache) e.npm_config_cache = cache;
  return e;
};

function timed(cmd: string, args: string[], cwd: string, e: NodeJS.ProcessEnv): number {
  const t = performance.now();
  execFileSync(cmd, args, { cwd, env: e, stdio: ['ignore', 'ignore', 'inherit'] });
  return performance.now() - t;
}

interface Started {
  readonly child: ChildProcess;
  readonly ms: number;
}

async function makeRun(cwd: string, e: NodeJS.ProcessEnv, port: number): Promise<Started> {
  const t = performance.now();
  const child = spawn('make', ['run'], { cwd, env: { ...e, PORT: String(port) }, detached: true, stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 600_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`make run exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.ok, () => false);
    if (ok) return { child, ms: performance.now() - t };
    if (Date.now() > deadline) throw new Error('make run: not ready after 10 minutes');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function interrupt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGINT');
  await exited;
}

function children(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

const kb = (pid: number, file: string, field: string): number => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
  return m ? Number(m[1]) : 0;
};

/** RSS of the all-in-one Node process (make → node) and the summed PSS of its PostgreSQL tree. */
function memory(make: ChildProcess): { nodeMiB: number; postgresMiB: number } {
  const node = children(make.pid!).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('all-in-one'));
  if (!node) throw new Error('the all-in-one process was not found under make');
  const postmaster = children(node).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('postgres'));
  const tree = postmaster ? [postmaster, ...children(postmaster)] : [];
  return { nodeMiB: kb(node, 'status', 'VmRSS') / 1024, postgresMiB: tree.reduce((s, p) => s + kb(p, 'smaps_rollup', 'Pss'), 0) / 1024 };
}

const s1 = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const warm = process.env.FIGURES_NPM_CACHE === 'warm';
  const dir = mkdtempSync(join(tmpdir(), 'iam-figures-'));
  chmodSync(dir, 0o755); // as root, the embedded server runs as the postgres OS user, who must enter it
  const clone = join(dir, 'iam');
  const e = env(warm ? '' : join(dir, 'npm-cache'));
  const [port] = await freePorts(1);
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    const install = timed('make', ['install'], clone, e);
    const build = timed('make', ['build'], clone, e);
    const first = await makeRun(clone, e, port!);
    await interrupt(first.child);
    const next: number[] = [];
    let idle = { nodeMiB: 0, postgresMiB: 0 };
    for (let i = 0; i < 3; i++) {
      const run = await makeRun(clone, e, port!);
      next.push(run.ms);
      if (i === 2) {
        await new Promise((r) => setTimeout(r, 10_000));
        idle = memory(run.child);
      }
      await interrupt(run.child);
    }
    const node = execFileSync('make', ['-s', 'node-version'], { cwd: clone, env: e, encoding: 'utf8' }).trim();
    const date = new Date().toISOString().slice(0, 10);
    const text = [
      `Measured by \`make figures\` on ${date} (commit ${head}, ${cpus()} cores, Node ${node}, npm cache ${warm ? 'warm' : 'empty'}):`,
      `from a fresh clone, \`make run\` answered \`/health/ready\` 200 after **${s1(install + build + first.ms)}**`,
      `(\`make install\` ${s1(install)}, \`make build\` ${s1(build)}, first start with initdb ${s1(first.ms)}) and after`,
      `**${s1(median(next))}** on the next start (median of ${next.map(s1).join(', ')}); at rest, the Node process held`,
      `**${Math.round(idle.nodeMiB)} MB** RSS and the embedded PostgreSQL **${Math.round(idle.postgresMiB)} MB** over its processes (PSS, shared memory counted once).`,
    ].join('\n');
    process.stdout.write(`${text}\n`);
    if (!process.argv.includes('--print')) writeReadme(text);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function cpus(): number {
  return readFileSync('/proc/cpuinfo', 'utf8').split('\n').filter((l) => l.startsWith('processor')).length;
}

function writeReadme(text: string): void {
  const file = join(ROOT, 'README.md');
  const readme = readFileSync(file, 'utf8');
  const a = readme.indexOf(MARK_START);
  const b = readme.indexOf(MARK_END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${MARK_START} … ${MARK_END} block`);
  writeFileSync(file, `${readme.slice(0, a + MARK_START.length)}\n${text}\n${readme.slice(b)}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`make figures: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
