/**
 * A write that must not be lost when it fails once, retried in the background: after each failure
 * it runs again after a delay that doubles (from `firstDelayMs` up to `maxDelayMs`), until it
 * succeeds or `forMs` has passed since the first failure. The timers do not hold the process
 * open: one that exits meanwhile gives the write up, as does the end of `forMs` (logged then).
 */
import type { Logger } from './logger';

export interface RetryOptions {
  /** How long after the first failure it is still tried. */
  readonly forMs: number;
  readonly firstDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly logger: Logger;
  /** What it does, for the logs (no secrets). */
  readonly what: string;
}

/** Whether `fn` succeeded in the end; never rejects. The first failure is `firstError` (already seen by the caller). */
export async function retryAfterFailure(fn: () => Promise<unknown>, firstError: unknown, opts: RetryOptions): Promise<boolean> {
  const giveUpAt = Date.now() + opts.forMs;
  let delay = opts.firstDelayMs ?? 1_000;
  let last = firstError;
  for (let attempt = 2; Date.now() + delay <= giveUpAt; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
    try {
      await fn();
      opts.logger.info({ attempt }, `${opts.what}: done on a retry`);
      return true;
    } catch (err) {
      last = err;
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 30_000);
    }
  }
  opts.logger.error({ err: last, forMs: opts.forMs }, `${opts.what}: given up`);
  return false;
}
