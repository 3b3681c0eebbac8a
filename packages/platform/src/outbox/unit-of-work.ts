/**
 * A unit of work: one database transaction over a service's stores, whose published events are
 * written to the outbox in that transaction (so they commit, or roll back, with the change).
 */
import type { DataSource, EntityManager } from 'typeorm';
import { pgErrorCode } from '../db';
import { type NewEvent, appendEvents } from './append';

/** Stores bound to one transaction, plus publishing events into that transaction's outbox. */
export type InTransaction<S> = S & { publish(events: readonly NewEvent[]): Promise<void> };

/** Runs work in one database transaction; events it publishes are written to the outbox in it. */
export interface UnitOfWork<S> {
  run<T>(fn: (tx: InTransaction<S>) => Promise<T>): Promise<T>;
}

/** A UnitOfWork over `ds` whose transactions see the stores `stores(manager)` builds. */
export function outboxUnitOfWork<S extends object>(ds: DataSource, stores: (m: EntityManager) => S): UnitOfWork<S> {
  return {
    run: async (fn) => {
      // A transaction PostgreSQL aborted to break a deadlock (or a serialization failure) did
      // nothing; it is run again, a few times, rather than surfacing as an internal error.
      for (let attempt = 1; ; attempt++) {
        try {
          return await ds.transaction((m) =>
            fn({
              ...stores(m),
              publish: async (events: readonly NewEvent[]) => {
                await appendEvents(m, events);
              },
            }),
          );
        } catch (err) {
          if (attempt >= 3 || !RETRYABLE_TX_ERRORS.has(pgErrorCode(err) ?? '')) throw err;
          await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
        }
      }
    },
  };
}

/** deadlock_detected, serialization_failure. */
const RETRYABLE_TX_ERRORS = new Set(['40P01', '40001']);
