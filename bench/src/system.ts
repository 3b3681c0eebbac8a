/** Starts the all-in-one system as a child process for the benchmarks and waits until it is ready. */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { join } from 'node:path';

export interface BenchSystem {
  readonly base: string;
  stop(): Promise<void>;
}

export const ROOT = join(__dirname, '..', '..');

/**
 * `split`: one process per service, as in production (needs external PostgreSQL and NATS);
 * otherwise the all-in-one process.
 */
export async function startSystem(env: Record<string, string>, port: number, split: boolean): Promise<BenchSystem> {
  const scripts = split
    ? ['services/directory/dist/main.js', 'services/identity/dist/main.js', 'services/notification/dist/main.js', 'services/commerce/dist/main.js', 'gateway/dist/main.js']
    : ['deploy/all-in-one/dist/main.js'];
  if (split && env.ADMIN_EMAIL) {
    execFileSync(process.execPath, [join(ROOT, 'services/directory/dist/main.js'), '--create-admin'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'inherit' });
  }
  const children: ChildProcess[] = scripts.map((s) =>
    fork(join(ROOT, s), [], { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }),
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const dead = children.find((c) => c.exitCode !== null);
    if (dead) throw new Error(`a system process exited with code ${dead.exitCode}`);
    try {
      const r = await fetch(`${base}/health/ready`);
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the system did not become ready in 120 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    base,
    stop: async () => {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

export function startChild(script: string, args: string[]): Promise<ChildProcess> {
  const child = fork(join(__dirname, script), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}
