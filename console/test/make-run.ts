/**
 * The all-in-one process started as `make run` starts it (deploy/all-in-one/dist/main.js), with a
 * newcomer's shell: nothing of mail configured (no SMTP_URL, no EMAIL_ACTION_BASE_URL), no
 * external bus, no PUBLIC_URL; its databases on the test PostgreSQL instead of the embedded one,
 * for speed. Used by the mailbox walk (mailbox.e2e.test.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestDatabase, createTestDatabase, eventually, freePort as sharedFreePort } from '@iam/platform/testing';

export const MAIN = join(__dirname, '..', '..', 'deploy', 'all-in-one', 'dist', 'main.js');
const SERVICES = ['directory', 'identity', 'notification', 'commerce', 'audit'] as const;

/**
 * A free port above 23000 whose gRPC followers (PORT − 8080 + 50051…) fall out of range, so they
 * are chosen at start; IAM_TEST_PORTS (`27200-27299`) narrows the range for a shared machine.
 */
function freePort(): Promise<number> {
  return sharedFreePort(process.env.IAM_TEST_PORTS ? undefined : [23_000, 23_999]);
}

export interface MakeRun {
  /** http://localhost:<port>: the gateway, the console, the hosted pages. */
  base: string;
  /** Everything the process printed so far (JSON logs at debug level). */
  log(): string;
  stop(): Promise<void>;
}

/** Starts the process with this bootstrap administrator and waits until it is ready. */
export async function startMakeRun(dbPrefix: string, admin: { email: string; password: string }): Promise<MakeRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'iam-make-run-'));
  const dbs: TestDatabase[] = [];
  let child: ChildProcess | undefined;
  let log = '';
  const stop = async () => {
    if (process.env.MAILBOX_WALK_LOG) writeFileSync(process.env.MAILBOX_WALK_LOG, log);
    child?.stdout?.destroy();
    child?.stderr?.destroy();
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    for (const db of dbs) await db.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env };
    // As a newcomer's shell: nothing of mail configured, no external bus, default ports.
    for (const k of Object.keys(env)) if (/^(SMTP_URL|EMAIL_ACTION_BASE_URL|NATS_URL|HOST|BIND_HOST|PUBLIC_URL)$|_(GRPC_PORT|GRPC_TARGET|DATABASE_URL)$/.test(k)) delete env[k];
    for (const s of SERVICES) {
      const db = await createTestDatabase(`${dbPrefix}_${s}`);
      dbs.push(db);
      env[`${s.toUpperCase()}_DATABASE_URL`] = db.url;
    }
    Object.assign(env, {
      PORT: String(port),
      DATA_DIR: join(dataDir, 'data'),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      ARGON2_MEMORY_KIB: '8192',
      ARGON2_ITERATIONS: '1',
    });
    const started = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    started.stdout?.setEncoding('utf8').on('data', (d: string) => (log += d));
    started.stderr?.setEncoding('utf8').on('data', (d: string) => (log += d));
    await eventually(() => log.includes('iam is up at') || started.exitCode !== null, 180_000, 250);
    if (started.exitCode !== null) throw new Error(`the all-in-one exited:\n${log.slice(-3000)}`);
    await eventually(async () => (await fetch(`${base}/health/ready`).catch(() => undefined))?.ok === true, 60_000, 250);
    return { base, log: () => log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
