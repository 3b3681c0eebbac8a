/** Starts the all-in-one system as a child process for the benchmarks and waits until it is ready. */
import { randomBytes } from 'node:crypto';
import { type ChildProcess, type ForkOptions, execFileSync, fork } from 'node:child_process';
import { createServer } from 'node:net';
import { basename, dirname, join } from 'node:path';

export interface BenchSystem {
  readonly base: string;
  stop(): Promise<void>;
}

export const ROOT = join(__dirname, '..', '..');

/** The login and refresh rate limits lifted: the bench measures the work, not the limiter. */
export const AUTH_LIMITS_LIFTED: Record<string, string> = {
  RATE_LIMIT_LOGIN_PER_MINUTE: '10000000',
  RATE_LIMIT_LOGIN_BURST: '10000000',
  RATE_LIMIT_REFRESH_PER_MINUTE: '10000000',
  RATE_LIMIT_REFRESH_BURST: '10000000',
  // The bench's sign-ins through the provider (authorization requests and their resumes).
  RATE_LIMIT_AUTHORIZE_PER_MINUTE: '10000000',
  RATE_LIMIT_AUTHORIZE_BURST: '10000000',
};

/** Node's flags for the all-in-one process, as `make run` gives them (Makefile: ALL_IN_ONE_HEAP_MIB, ALL_IN_ONE_SEMI_SPACE_MIB). */
export const ALL_IN_ONE_EXEC_ARGV = [`--max-old-space-size=${process.env.ALL_IN_ONE_HEAP_MIB ?? 256}`, `--max-semi-space-size=${process.env.ALL_IN_ONE_SEMI_SPACE_MIB ?? 8}`];

/** The all-in-one process started as `make run` starts it. */
export function forkAllInOne(options: ForkOptions): ChildProcess {
  return fork(join(ROOT, 'deploy/all-in-one/dist/main.js'), [], { cwd: ROOT, ...options, execArgv: [...process.execArgv, ...ALL_IN_ONE_EXEC_ARGV] });
}

/** `n` TCP ports free on loopback now (the kernel's choice, released at once). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * How the bench's processes reach each other: gRPC ports and targets of the services on free
 * ports, so a bench run never collides with another system on the defaults (50051–50055) on a
 * shared machine (the bench starts no audit service: its target is a free port, and the gateway's
 * readiness does not count it), and the key their calls are asserted with (INTERNAL_CALL_KEY).
 */
export async function grpcPortsEnv(base?: number): Promise<Record<string, string>> {
  const services = ['IDENTITY', 'DIRECTORY', 'NOTIFICATION', 'COMMERCE', 'AUDIT'];
  // `base` (BENCH_GRPC_PORT_BASE): consecutive ports from it, where a machine gives each user a range.
  const ports = base ? services.map((_, i) => base + i) : await freePorts(services.length);
  return {
    ...Object.fromEntries(services.flatMap((s, i) => [[`${s}_GRPC_PORT`, String(ports[i])], [`${s}_GRPC_TARGET`, `127.0.0.1:${ports[i]}`]])),
    INTERNAL_CALL_KEY: randomBytes(32).toString('base64'),
  };
}

/** A child whose last lines of output are kept, to say why it exited. */
interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  tail(): string;
}

function forkChild(script: string, env: Record<string, string | undefined>): Child {
  const options: ForkOptions = { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] };
  const child = script === 'deploy/all-in-one/dist/main.js' ? forkAllInOne(options) : fork(join(ROOT, script), [], options);
  const lines: string[] = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    lines.push(...chunk.split('\n').filter(Boolean));
    if (lines.length > 20) lines.splice(0, lines.length - 20);
  });
  return { name: basename(dirname(dirname(script))), process: child, tail: () => lines.join('\n') };
}

/**
 * `split`: one process per service, as in production (needs external PostgreSQL and NATS);
 * otherwise the all-in-one process. When one exits or the system is not ready in time, every
 * process already started is stopped before the error is thrown.
 */
export async function startSystem(env: Record<string, string>, port: number, split: boolean): Promise<BenchSystem> {
  const scripts = split
    ? ['services/directory/dist/main.js', 'services/identity/dist/main.js', 'services/notification/dist/main.js', 'services/commerce/dist/main.js', 'gateway/dist/main.js']
    : ['deploy/all-in-one/dist/main.js'];
  if (split) {
    // The services refuse a schema behind their code; migrating is its own step (make migrate).
    for (const s of scripts.filter((x) => x.startsWith('services/'))) {
      execFileSync(process.execPath, [join(ROOT, s), 'migrate'], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] });
    }
  }
  if (split && env.ADMIN_EMAIL) {
    execFileSync(process.execPath, [join(ROOT, 'services/directory/dist/main.js'), '--create-admin'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'inherit' });
  }
  const children = scripts.map((s) => forkChild(s, { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' }));
  return await ready(`http://127.0.0.1:${port}`, children);
}

/**
 * One more gateway process in front of the same services (production shape), with its own
 * settings: the bench's gateway with the read cache off (GATEWAY_READ_CACHE=false).
 */
export async function startExtraGateway(env: Record<string, string>, port: number): Promise<BenchSystem> {
  const child = forkChild('gateway/dist/main.js', { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' });
  return await ready(`http://127.0.0.1:${port}`, [child]);
}

async function ready(base: string, children: readonly Child[]): Promise<BenchSystem> {
  const processes = children.map((c) => c.process);
  try {
    await waitReady(base, processes);
  } catch (err) {
    await stopAll(processes);
    const dead = children.filter((c) => c.process.exitCode !== null && c.process.exitCode !== 0 && c.tail());
    throw new Error(`${(err as Error).message}${dead.map((c) => `\n--- ${c.name}, last output:\n${c.tail()}`).join('')}`);
  }
  return { base, stop: () => stopAll(processes) };
}

/** Resolves once `base` answers /health/ready with 200 (throws if a process exits first, or after 120 s). */
export async function waitReady(base: string, children: readonly ChildProcess[], timeoutMs = 120_000, intervalMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = children.find((c) => c.exitCode !== null);
    if (dead) throw new Error(`a system process exited with code ${dead.exitCode}`);
    try {
      const r = await fetch(`${base}/health/ready`);
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the system did not become ready in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** SIGTERM to each live child, SIGKILL after 15 s; resolves when all have exited. */
async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

export function startChild(script: string, args: string[]): Promise<ChildProcess> {
  const child = fork(join(__dirname, script), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/**
 * Raw argon2id verifications per second at the OWASP parameters the bench's system uses
 * (m=19 MiB, t=2, p=1), `concurrency` at once for `seconds`, in a child process (scenario 1's
 * baseline): `argon2-baseline.js`; with the CPU milliseconds one verification costs (all the child's threads).
 */
export function argon2BaselineCpu(concurrency: number, seconds: number): { perSecond: number; cpuMsPerOp: number } {
  const out = execFileSync(process.execPath, [join(__dirname, 'argon2-baseline.js'), '19456', '2', '1', String(concurrency), String(seconds)]);
  return JSON.parse(out.toString()) as { perSecond: number; cpuMsPerOp: number };
}
