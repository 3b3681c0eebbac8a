/**
 * For tests that run their own servers: a private nats-server (JetStream, its own port and store)
 * that can be stopped and started again, leaving the shared one alone; free ports to put such
 * servers on; and a TCP probe for ports.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { eventually, freePort as sharedFreePort } from '@iam/platform/testing';

/** The nats-server binary, when one is installed. */
export const natsBinary = ['/usr/sbin/nats-server', '/usr/local/bin/nats-server', '/usr/bin/nats-server'].find((p) => spawnSync(p, ['--version']).status === 0);

/**
 * A port nothing listens on now, below Linux's ephemeral range (32768–60999): a server restarted
 * on its port must find it free, and an outgoing connection (this machine makes thousands) may
 * take any ephemeral port as its own end meanwhile (EADDRINUSE at a restart).
 */
export function freePort(): Promise<number> {
  return sharedFreePort([20_000, 31_999]);
}

export function listening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

export interface TestNatsServer {
  /** Known once it has started. */
  readonly url: string;
  /** Starts it (again, on the same port and store: streams survive); the first start picks a free port. */
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A nats-server with its store under `dir`. */
export function testNatsServer(dir: string): TestNatsServer {
  let proc: ChildProcess | undefined;
  let port: number | undefined;
  return {
    get url(): string {
      if (port === undefined) throw new Error('the NATS server has not started yet');
      return `nats://127.0.0.1:${port}`;
    },
    start: async () => {
      const p = (port ??= await freePort());
      proc = spawn(natsBinary!, ['-a', '127.0.0.1', '-p', String(p), '-js', '-sd', join(dir, 'nats')], { stdio: 'ignore' });
      await eventually(() => listening(p), 10_000, 50);
    },
    stop: async (signal = 'SIGTERM') => {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        p.once('exit', () => resolve());
        p.kill(signal);
      });
    },
  };
}
