/**
 * Retention: entries recorded more than the retention setting ago (AUDIT_RETENTION_DAYS, kept in
 * the database by the migrate step) are removed oldest first, in batches (each its own short
 * transaction), as a prefix of the chain: the hash of the last removed entry becomes the anchor
 * the retained chain is verified from. The removal itself is audit_purge() in the database.
 */
import type { Logger } from '@iam/platform';
import type { AuditUnitOfWork } from '../domain/ports';

export interface RetentionOptions {
  readonly batch: number;
  readonly intervalMs: number;
}

/** One pass: batches until nothing expired is left; returns how many entries went. */
export async function purgeExpired(uow: AuditUnitOfWork, o: Pick<RetentionOptions, 'batch'>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await uow.run(({ log }) => log.purge(o.batch));
    total += n;
    if (n < o.batch) return total;
  }
}

/** Runs a pass now and every intervalMs; returns the stop function. */
export function startRetention(uow: AuditUnitOfWork, o: RetentionOptions, logger: Logger): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const pass = () => {
    running = purgeExpired(uow, o)
      .then((n) => n > 0 && logger.info({ removed: n }, 'audit retention removed expired entries'))
      .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'audit retention pass failed; next pass retries'));
  };
  pass();
  const timer = setInterval(pass, o.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
