/**
 * Runs a batch job in the background until it finds nothing to do, then sleeps `pollMs` or until
 * nudged; a failing batch (database or bus down) is retried with a doubling backoff (250 ms up to
 * 5 s). The outbox relay runs on it, identity's accepted email-action requests, and every
 * service's housekeeping (batchSize 1, work that claims nothing: once per pollMs); polling also
 * picks up what a crashed process or another replica left.
 */
import type { Logger } from './logger';

export interface BatchLoopOptions {
  /** Names the loop in its log lines. */
  readonly name: string;
  /** Processes one batch of at most `batchSize`; returns how many items it claimed. */
  readonly work: (batchSize: number) => Promise<number>;
  readonly batchSize: number;
  /** The sleep when a batch found less than batchSize; a function is asked before every sleep. */
  readonly pollMs: number | (() => number);
  readonly logger: Logger;
  /** After every batch, failed or not (measurements); its failures are ignored. */
  readonly after?: () => Promise<void>;
  /** Whether a nudge cuts a failure's backoff short (default false: the backoff decides). */
  readonly nudgeDuringBackoff?: boolean;
}

export class BatchLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Nudged while a batch ran: go again without sleeping. */
  private woken = false;
  private backoffMs = 0;

  constructor(private readonly o: BatchLoopOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Work soon: now when sleeping, right after the current batch otherwise. */
  nudge(): void {
    if (this.backoffMs > 0 && !this.o.nudgeDuringBackoff) return;
    if (this.wake) this.wake();
    else this.woken = true;
  }

  /** Stops after the current batch. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.o.work(this.o.batchSize);
        this.backoffMs = 0;
      } catch (err) {
        this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 250), 5_000);
        this.o.logger.warn({ err: (err as Error).message, retryInMs: this.backoffMs }, `${this.o.name}: batch failed; will retry`);
      }
      await this.o.after?.().catch(() => undefined);
      // Stopped while the batch ran: no sleep (a stop() would wait for all of it).
      if (!this.running || (claimed >= this.o.batchSize && this.backoffMs === 0)) continue;
      await this.sleep(this.backoffMs || (typeof this.o.pollMs === 'function' ? this.o.pollMs() : this.o.pollMs));
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken && (this.backoffMs === 0 || this.o.nudgeDuringBackoff)) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        // Cleared however the sleep ends: a nudge during the next batch must set `woken`, not
        // call a wake whose sleep is over.
        this.wake = undefined;
        this.woken = false;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
