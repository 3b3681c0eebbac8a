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
  /**
   * Each component's status. One that was up and has stopped answering in time (no refusal) stays
   * up for the monitor's grace (timeoutGraceMs), listed in `timedOut` meanwhile: one slow answer
   * on a loaded machine is not an outage.
   */
  readonly checks: Readonly<Record<string, ComponentStatus>>;
  /** Names among `checks` that are only reported (they do not decide `ready`). */
  readonly informational: readonly string[];
  readonly checkedAt: Date;
  /** When each component was first found in its current status (absent before its first check). */
  readonly since: Readonly<Record<string, Date>>;
  /**
   * Components whose last check ran out of time (no answer, rather than a refusal or a "not
   * serving"), whether still held up or already down: on a starved event loop that is this
   * process's slowness as often as theirs.
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
  /** Between checks while any component is down, timing out, or just changed (default 1 s). */
  intervalMs?: number;
  /**
   * Between checks once every component has been up for two checks in a row, or nothing has
   * changed for STEADY_DOWN_CHECKS (default HEALTH_IDLE_INTERVAL_MS, or intervalMs when that is
   * given): a process at rest wakes its database and upstreams less often (issue #43, idle CPU);
   * a refusal, or a recovery, is still seen within it.
   */
  idleIntervalMs?: number;
  timeoutMs?: number;
  /**
   * How long a component that was up may go on not answering its check in time before it counts
   * as down (default 3 s, about three checks). A refusal counts at once.
   */
  timeoutGraceMs?: number;
}

/** The default of HealthMonitorOptions.idleIntervalMs. */
export const HEALTH_IDLE_INTERVAL_MS = 5_000;

/** Unchanged checks after which a component that stays down is checked every idleIntervalMs. */
export const STEADY_DOWN_CHECKS = 10;

/** The default of HealthMonitorOptions.timeoutGraceMs. */
export const HEALTH_TIMEOUT_GRACE_MS = 3_000;

export class HealthMonitor {
  private snapshotValue: HealthSnapshot;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private running: Promise<HealthSnapshot> | undefined;
  private readonly listeners: Array<(s: HealthSnapshot) => void> = [];
  private readonly intervalMs: number;
  private readonly idleIntervalMs: number;
  /** Checks in a row that found every component as the one before, none timing out. */
  private steady = 0;
  private allUp = false;
  private readonly timeoutMs: number;
  private readonly timeoutGraceMs: number;
  private readonly all: Record<string, HealthCheck>;
  /** Since when each component held up has not answered its checks in time. */
  private readonly unansweredSince = new Map<string, number>();

  constructor(private readonly opts: HealthMonitorOptions) {
    this.intervalMs = opts.intervalMs ?? 1000;
    this.idleIntervalMs = opts.idleIntervalMs ?? (opts.intervalMs !== undefined ? opts.intervalMs : HEALTH_IDLE_INTERVAL_MS);
    this.timeoutMs = opts.timeoutMs ?? 1000;
    this.timeoutGraceMs = opts.timeoutGraceMs ?? HEALTH_TIMEOUT_GRACE_MS;
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
    if (this.started) return;
    this.started = true;
    const tick = (): void => {
      void this.refresh().finally(() => {
        if (!this.started) return;
        this.timer = setTimeout(tick, this.isSteady() ? this.idleIntervalMs : this.intervalMs);
        this.timer.unref();
      });
    };
    tick();
  }

  /**
   * Every component up for two checks in a row, or nothing changed for STEADY_DOWN_CHECKS (a
   * component that stays down, e.g. an optional upstream not deployed, is then checked every
   * idleIntervalMs too: its recovery is seen within it).
   */
  private isSteady(): boolean {
    return (this.allUp && this.steady >= 2) || this.steady >= STEADY_DOWN_CHECKS;
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * The status of a component whose check just timed out: up while it was up and has not
   * answered for less than the grace, down otherwise.
   */
  private unansweredStatus(name: string): ComponentStatus {
    if (this.snapshotValue.checks[name] !== 'up') return 'down';
    const now = Date.now();
    const since = this.unansweredSince.get(name) ?? now;
    this.unansweredSince.set(name, since);
    return now - since < this.timeoutGraceMs ? 'up' : 'down';
  }

  private async runChecks(): Promise<HealthSnapshot> {
    const names = Object.keys(this.all);
    const results = await Promise.all(
      names.map(async (name): Promise<readonly [string, ComponentStatus, boolean]> => {
        try {
          await withTimeout(this.all[name]!(), this.timeoutMs);
          this.unansweredSince.delete(name);
          return [name, 'up', false];
        } catch (err) {
          const timedOut = err instanceof TimeoutError;
          const status = timedOut ? this.unansweredStatus(name) : 'down';
          if (!timedOut) this.unansweredSince.delete(name);
          const known = this.snapshotValue.checks[name] === 'down' || (status === 'up' && this.snapshotValue.timedOut.includes(name));
          if (!known || this.snapshotValue.checkedAt.getTime() === 0) {
            this.opts.logger.warn({ component: name, err: describe(err), ...(status === 'up' ? { heldUp: true } : {}) }, 'health check failed');
          }
          return [name, status, timedOut];
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
    this.allUp = names.every((n) => checks[n] === 'up');
    this.steady = changed || next.timedOut.length > 0 ? 0 : this.steady + 1;
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
