/**
 * `make run` as a newcomer meets it (issue #27): the all-in-one process on its own embedded
 * PostgreSQL, started in a process group of its own and interrupted the way a terminal's Ctrl-C
 * does (SIGINT to the whole group). It logs short human lines, listens on loopback only, moves its
 * gRPC ports with PORT, and on Ctrl-C ends with the "stopped" line and exit code 0, the embedded
 * server stopped last (it is in a group of its own, so the terminal's SIGINT never reaches it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@iam/platform/testing';
import { localPorts } from '../src/local-ports';
import { listening } from './support/nats';

jest.setTimeout(180_000);

const MAIN = join(__dirname, '..', 'dist', 'main.js');

/**
 * A PORT whose followers (gRPC ports and the embedded PostgreSQL's, shifted by PORT − 8080) are
 * all free. They land above 50051, in the ephemeral range, so each is checked before use.
 */
async function portWithFollowers(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = 9_000 + Math.floor(Math.random() * 5_000);
    const { grpc, embeddedPostgres } = localPorts(port);
    const all = [port, ...Object.values(grpc), embeddedPostgres];
    const taken = await Promise.all(all.map((p) => listening(p)));
    if (!taken.some(Boolean) || attempt > 20) return port;
  }
}

function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

describe('make run: the all-in-one process on a terminal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-make-run-'));
  chmodSync(dir, 0o755); // the embedded server may run as another OS user (when tests run as root)
  let child: ChildProcess;
  let out = '';
  let port: number;
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** Starts the process on a fresh PORT; true once it is up, false when it exited. */
  async function start(): Promise<boolean> {
    out = '';
    port = await portWithFollowers();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: join(dir, 'data'), LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' };
    for (const k of Object.keys(env)) if (/_(GRPC_PORT|GRPC_TARGET|DATABASE_URL)$|^(NATS_URL|HOST|BIND_HOST|EMBEDDED_PG_PORT|PUBLIC_URL)$/.test(k)) delete env[k];
    // detached: a process group of its own, as a shell gives a foreground job.
    child = spawn(process.execPath, [MAIN], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (out += d));
    exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await eventually(() => out.includes('iam is up at') || child.exitCode !== null, 120_000, 250);
    if (child.exitCode !== null) await exit;
    return child.exitCode === null;
  }

  beforeAll(async () => {
    // Its gRPC and PostgreSQL ports lie in the ephemeral range, where an outgoing connection of a
    // parallel suite may take one between the check and the bind: such a start is tried again.
    for (let attempt = 1; !(await start()) && /EADDRINUSE/.test(out) && attempt < 3; attempt++);
    expect({ exitCode: child.exitCode, output: child.exitCode === null ? '' : out.slice(-3_000) }).toEqual({ exitCode: null, output: '' });
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok, 60_000, 250);
  });

  afterAll(() => {
    if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs one short line per entry, not JSON, and says where it is', () => {
    const lines = out.split('\n').filter(Boolean);
    expect(lines.some((l) => l.startsWith('{'))).toBe(false);
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: directory: gRPC server listening/m);
    // The console's link is at PUBLIC_URL (by default http://localhost:{PORT}): the OpenID provider sends browsers back only there.
    expect(out).toContain(`iam is up at http://127.0.0.1:${port} (the console at http://localhost:${port}/console, your account at http://localhost:${port}/account`);
  });

  it('listens on loopback only, and its gRPC ports follow PORT', async () => {
    expect(await listening(port)).toBe(true);
    const external = externalAddress();
    if (external) expect(await listening(port, external)).toBe(false);
    const { grpc } = localPorts(port);
    for (const p of Object.values(grpc)) expect(out).toContain(`"address":"127.0.0.1:${p}"`);
  });

  it('answers requests, logging them at debug (not on the default info level)', async () => {
    const before = out.length;
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/api/v1/products`)).ok, 30_000, 250);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(out.slice(before)).not.toContain('request');
  });

  it('Ctrl-C (SIGINT to the process group): the "stopped" line, exit code 0, the database stopped', async () => {
    const pidFile = join(dir, 'data', 'postgres', 'data', 'postmaster.pid');
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    process.kill(-child.pid!, 'SIGINT');
    const { code, signal } = await exit;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const lines = out.trim().split('\n');
    expect(lines.at(-1)).toMatch(/INFO: stopped$/);
    expect(out.slice(out.indexOf('shutting down'))).not.toMatch(/WARN|ERROR|database system is shutting down/);
    expect(existsSync(pidFile)).toBe(false);
    expect(() => process.kill(postmaster, 0)).toThrow();
  });
});
