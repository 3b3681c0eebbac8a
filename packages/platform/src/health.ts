/**
 * Readiness of a process: named checks (database, upstream services) run in the background on an
 * interval, so probes read a fresh snapshot without doing I/O themselves. Informational checks
 * (the event bus, upstreams the process can serve without) run alike and appear in the snapshot,
 * but do not decide readiness.
 */
import type { Logger } from './logger';

export type HealthCheck = () => Promise<void>;
export type ComponentStatus = 'up' | 'down';

export interface HealthSnapshot {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, ComponentStatus>>;
  /** Names among `checks` that are only reported (they do not decide `ready`). */
  readonly informational: readonly string[];
  readonly checkedAt: Date;
  /** When each component was first found in its current status (absent before its first check). */
  readonly since: Readonly<Record<string, Date>>;
  /**
   * Components down only because their check ran out of time (no answer, rather than a refusal
   * or a "not serving"): on a starved event loop that is this process's slowness as often as theirs.
   */
  readonly timedOut: readonly string[];
}

/** The error of an operation that did not finish in time (withTimeout). */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

export interface HealthMonitorOptions {
  /** Every one must pass for the process to be ready. */
  checks: Record<string, HealthCheck>;
  /** Reported in the snapshot, never making the process unready. */
  informational?: Record<string, HealthCheck>;
  logger: Logger;
  intervalMs?: number;
  timeoutMs?: number;
}

export class HealthMonitor {
  private snapshotValue: HealthSnapshot;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<HealthSnapshot> | undefined;
  private readonly listeners: Array<(s: HealthSnapshot) => void> = [];
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly all: Record<string, HealthCheck>;

  constructor(private readonly opts: HealthMonitorOptions) {
    this.intervalMs = opts.intervalMs ?? 1000;
    this.timeoutMs = opts.timeoutMs ?? 1000;
    this.all = { ...opts.informational, ...opts.checks };
    const checks = Object.fromEntries(Object.keys(this.all).map((k) => [k, 'down' as const]));
    this.snapshotValue = { ready: false, checks, informational: Object.keys(opts.informational ?? {}), checkedAt: new Date(0), since: {}, timedOut: [] };
  }

  snapshot(): HealthSnapshot {
    return this.snapshotValue;
  }

  /** Calls `fn` now and after every change of any component's status. */
  onChange(fn: (s: HealthSnapshot) => void): void {
    this.listeners.push(fn);
    fn(this.snapshotValue);
  }

  /** Runs every check once (concurrent callers share the run). */
  refresh(): Promise<HealthSnapshot> {
    this.running ??= this.runChecks().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  start(): void {
    if (this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async runChecks(): Promise<HealthSnapshot> {
    const names = Object.keys(this.all);
    const results = await Promise.all(
      names.map(async (name) => {
        try {
          await withTimeout(this.all[name]!(), this.timeoutMs);
          return [name, 'up', false] as const;
        } catch (err) {
          if (this.snapshotValue.checks[name] !== 'down' || this.snapshotValue.checkedAt.getTime() === 0) {
            this.opts.logger.warn({ component: name, err: describe(err) }, 'health check failed');
          }
          return [name, 'down', err instanceof TimeoutError] as const;
        }
      }),
    );
    const checks = Object.fromEntries(results.map(([name, status]) => [name, status])) as Record<string, ComponentStatus>;
    const checkedAt = new Date();
    const prev = this.snapshotValue;
    const first = prev.checkedAt.getTime() === 0;
    const since = Object.fromEntries(names.map((n) => [n, !first && prev.checks[n] === checks[n] && prev.since[n] ? prev.since[n] : checkedAt]));
    const next: HealthSnapshot = {
      ready: results.every(([name, s]) => s === 'up' || !(name in this.opts.checks)),
      checks,
      informational: this.snapshotValue.informational,
      checkedAt,
      since,
      timedOut: results.filter(([, , timedOut]) => timedOut).map(([name]) => name),
    };
    const changed = names.some((n) => this.snapshotValue.checks[n] !== checks[n]) || this.snapshotValue.checkedAt.getTime() === 0 || next.ready !== this.snapshotValue.ready;
    this.snapshotValue = next;
    if (changed) {
      this.opts.logger.info({ ready: next.ready, checks }, 'health changed');
      for (const l of this.listeners) l(next);
    }
    return next;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function withTimeout<T>(p: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
