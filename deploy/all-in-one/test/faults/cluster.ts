/**
 * The fault suite's system: every service and the gateway as its own process (their built
 * `dist/main.js`, as in production), on PostgreSQL servers and a nats-server of the test's own, on
 * ports of its own, so a test can stop, restart, kill or cut off any one of them. Logs go to
 * files in the test's directory (printed when a test fails).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '@iam/platform/embedded-postgres';
import { eventually } from '@iam/platform/testing';
import { type TestNatsServer, freePort, natsBinary, testNatsServer } from '../support/nats';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const ADMIN = { email: 'admin@example.com', password: 'Admin-Passw0rd!' };

const MAINS = {
  directory: 'services/directory/dist/main.js',
  identity: 'services/identity/dist/main.js',
  notification: 'services/notification/dist/main.js',
  commerce: 'services/commerce/dist/main.js',
  gateway: 'gateway/dist/main.js',
} as const;
export type ProcessName = keyof typeof MAINS;

/** Whether this machine can run the suite (nats-server installed, the tree built). */
export const runnable = natsBinary !== undefined && Object.values(MAINS).every((m) => existsSync(join(ROOT, m)));

function stopChild(p: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.once('exit', () => resolve());
    p.kill(signal);
  });
}

export class Postgres {
  private handle: EmbeddedPostgresHandle | undefined;
  constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  url(db: string): string {
    return this.handle!.url(db);
  }

  async start(): Promise<void> {
    this.handle = await startEmbeddedPostgres({ dir: this.dir, port: this.port });
  }

  async stop(): Promise<void> {
    await this.handle?.stop();
  }
}

export interface ClusterOptions {
  /** Extra environment for every process (e.g. UPSTREAM_TIMEOUT_MS). */
  readonly env?: Record<string, string>;
  /** Give identity a PostgreSQL server of its own (to restart it alone). */
  readonly identityOwnPostgres?: boolean;
  /** Start the commerce service too, and mount the edge profile beside the full one. */
  readonly commerce?: boolean;
  /** Start the notification service (mail); needs `smtpPort`. */
  readonly smtpPort?: number;
  /** Where the gateway finds the directory (a fault proxy), instead of the directory itself. */
  readonly directoryTargetForGateway?: (directoryPort: number) => Promise<number>;
  /** Where identity finds its PostgreSQL (a fault proxy), instead of the server itself. */
  readonly identityDatabaseVia?: (postgresPort: number) => Promise<number>;
}

/** The whole system as separate processes, on its own servers and ports. */
export class Cluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'iam-faults-'));
  readonly env: Record<string, string>;
  readonly ports = { directory: 0, identity: 0, notification: 0, commerce: 0, gateway: 0, ops: {} as Record<string, number> };
  readonly nats: TestNatsServer = testNatsServer(this.dir);
  pg!: Postgres;
  identityPg!: Postgres;
  private readonly children = new Map<ProcessName, ChildProcess>();
  private gatewayDirectoryPort = 0;

  private constructor(private readonly opts: ClusterOptions) {
    chmodSync(this.dir, 0o755); // the embedded server may run as another OS user (tests as root)
    this.env = {
      NODE_OPTIONS: '',
      LOG_LEVEL: 'warn',
      // Each process migrates its own database at start (standalone processes may leave that to `migrate`).
      MIGRATE_ON_START: 'true',
      JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      OIDC_COOKIE_KEY: randomBytes(32).toString('base64'),
      IDENTITY_OP_PORT: '0',
      EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      INTERNAL_CALL_KEY: randomBytes(32).toString('base64'),
      ARGON2_MEMORY_KIB: '8192',
      ARGON2_ITERATIONS: '1',
      GATEWAY_PROFILES: 'full',
      HOST: '127.0.0.1',
      BIND_HOST: '127.0.0.1',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      RATE_LIMIT_LOGIN_PER_MINUTE: '1000000',
      RATE_LIMIT_LOGIN_BURST: '1000000',
      RATE_LIMIT_REFRESH_PER_MINUTE: '1000000',
      RATE_LIMIT_REFRESH_BURST: '1000000',
      RATE_LIMIT_EMAIL_ACTIONS_PER_MINUTE: '1000000',
      RATE_LIMIT_EMAIL_ACTIONS_BURST: '1000000',
      AUTH_MAX_FAILED_ATTEMPTS: '1000',
      EMAIL_ACTION_BASE_URL: 'https://app.example',
      ...opts.env,
    };
  }

  static async start(opts: ClusterOptions = {}): Promise<Cluster> {
    const c = new Cluster(opts);
    await c.boot();
    return c;
  }

  private async boot(): Promise<void> {
    this.pg = new Postgres(await freePort(), join(this.dir, 'pg'));
    await Promise.all([this.nats.start(), this.pg.start()]);
    this.identityPg = this.pg;
    if (this.opts.identityOwnPostgres) {
      this.identityPg = new Postgres(await freePort(), join(this.dir, 'pg-identity'));
      await this.identityPg.start();
    }
    for (const name of ['directory', 'identity', 'notification', 'commerce', 'gateway'] as const) {
      this.ports[name] = await freePort();
      this.ports.ops[name] = await freePort();
    }
    this.env.NATS_URL = this.nats.url;
    this.env.DIRECTORY_DATABASE_URL = this.pg.url('directory');
    this.env.NOTIFICATION_DATABASE_URL = this.pg.url('notification');
    this.env.IDENTITY_DATABASE_URL = this.identityPg.url('identity');
    if (this.opts.identityDatabaseVia) {
      const via = new URL(this.env.IDENTITY_DATABASE_URL);
      via.port = String(await this.opts.identityDatabaseVia(this.identityPg.port));
      this.env.IDENTITY_DATABASE_URL = via.toString();
    }
    this.env.DIRECTORY_GRPC_PORT = String(this.ports.directory);
    this.env.IDENTITY_GRPC_PORT = String(this.ports.identity);
    this.env.NOTIFICATION_GRPC_PORT = String(this.ports.notification);
    this.env.DIRECTORY_GRPC_TARGET = `127.0.0.1:${this.ports.directory}`;
    this.env.IDENTITY_GRPC_TARGET = `127.0.0.1:${this.ports.identity}`;
    this.env.NOTIFICATION_GRPC_TARGET = `127.0.0.1:${this.ports.notification}`;
    this.env.COMMERCE_DATABASE_URL = this.pg.url('commerce');
    this.env.COMMERCE_GRPC_PORT = String(this.ports.commerce);
    this.env.COMMERCE_GRPC_TARGET = `127.0.0.1:${this.ports.commerce}`;
    if (this.opts.commerce) this.env.GATEWAY_PROFILES = 'full,edge';
    this.env.PORT = String(this.ports.gateway);
    // The OpenID provider on a port of its own, proxied by the gateway (issuer: http://localhost:{PORT}).
    const opPort = await freePort();
    this.env.IDENTITY_OP_PORT = String(opPort);
    this.env.IDENTITY_OP_URL = `http://127.0.0.1:${opPort}`;
    if (this.opts.smtpPort) this.env.SMTP_URL = `smtp://127.0.0.1:${this.opts.smtpPort}`;
    const admin = spawnSync(process.execPath, [join(ROOT, MAINS.directory), '--create-admin'], {
      env: { ...process.env, ...this.env, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
      encoding: 'utf8',
    });
    if (admin.status !== 0) throw new Error(`--create-admin failed: ${admin.stderr}`);
    await this.start('directory');
    this.gatewayDirectoryPort = this.opts.directoryTargetForGateway ? await this.opts.directoryTargetForGateway(this.ports.directory) : this.ports.directory;
    await Promise.all([this.start('identity'), ...(this.opts.smtpPort ? [this.start('notification')] : []), ...(this.opts.commerce ? [this.start('commerce')] : [])]);
    await this.start('gateway');
  }

  get url(): string {
    return `http://127.0.0.1:${this.ports.gateway}`;
  }

  /**
   * Starts (or restarts) one process and waits until it is ready; `main` runs another entry of
   * its build (a fault-injecting one, e.g. services/identity/dist/testing/fault-main.js), `env`
   * adds to the cluster's environment.
   */
  async start(name: ProcessName, opts: { main?: string; env?: Record<string, string> } = {}): Promise<void> {
    const log = createWriteStream(join(this.dir, `${name}.log`), { flags: 'a' });
    const env: Record<string, string> = { ...this.env, [`${name.toUpperCase()}_METRICS_PORT`]: String(this.ports.ops[name]), ...opts.env };
    if (name === 'gateway') env.DIRECTORY_GRPC_TARGET = `127.0.0.1:${this.gatewayDirectoryPort}`;
    const child = spawn(process.execPath, [join(ROOT, opts.main ?? MAINS[name])], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    this.children.set(name, child);
    await this.waitReady(name);
  }

  /** /health/ready of the process answers 200. */
  async waitReady(name: ProcessName, timeoutMs = 30_000): Promise<void> {
    const url = name === 'gateway' ? `${this.url}/health/ready` : `http://127.0.0.1:${this.ports.ops[name]}/health/ready`;
    const child = this.children.get(name);
    await eventually(async () => {
      if (child && child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${this.log(name).slice(-2_000)}`);
      return (await this.ready(name, url)) === 200;
    }, timeoutMs, 100);
  }

  /** Status of /health/ready (0 when nothing answers). */
  async ready(name: ProcessName, url = name === 'gateway' ? `${this.url}/health/ready` : `http://127.0.0.1:${this.ports.ops[name]}/health/ready`): Promise<number> {
    try {
      return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status;
    } catch {
      return 0;
    }
  }

  async stop(name: ProcessName, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await stopChild(this.children.get(name), signal);
    this.children.delete(name);
  }

  /** Whether the process has exited (killed, crashed) since it was started. */
  exited(name: ProcessName): boolean {
    const child = this.children.get(name);
    return !child || child.exitCode !== null || child.signalCode !== null;
  }

  /** Process id (to tell a restart from a recovery). */
  pid(name: ProcessName): number | undefined {
    return this.children.get(name)?.pid;
  }

  log(name: ProcessName): string {
    const f = join(this.dir, `${name}.log`);
    return existsSync(f) ? readFileSync(f, 'utf8') : '';
  }

  async shutdown(): Promise<void> {
    for (const name of ['gateway', 'commerce', 'notification', 'identity', 'directory'] as const) await this.stop(name);
    await this.nats?.stop();
    await this.pg?.stop();
    if (this.identityPg !== this.pg) await this.identityPg?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface Answer {
  status: number;
  ms: number;
  contentType: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field
}

/** One HTTP call; status 0 when the client gave up after `timeoutMs` (a hang). */
export async function call(base: string, method: string, path: string, opts: { body?: unknown; token?: string; timeoutMs?: number } = {}): Promise<Answer> {
  const t = performance.now();
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  try {
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, ms: performance.now() - t, contentType: res.headers.get('content-type') ?? '', json };
  } catch {
    return { status: 0, ms: performance.now() - t, contentType: '', json: null };
  }
}

export function strongPassword(): string {
  return `Flt!${randomBytes(8).toString('hex')}#Aa9`;
}
