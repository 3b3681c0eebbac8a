import { appendEvents } from '@iam/platform';
import type { DataSource } from 'typeorm';
import type { Stores, UnitOfWork } from '../domain/ports';
import { pgStores } from './stores';

/** Transactions over the directory database; events go to the outbox in the same transaction. */
export function pgUnitOfWork(ds: DataSource): UnitOfWork {
  return {
    run: (fn) =>
      ds.transaction((m) =>
        fn({
          ...pgStores(m),
          publish: async (events) => {
            await appendEvents(m, events);
          },
        }),
      ),
  };
}

/** Stores outside any transaction, for reads. */
export function pgReadStores(ds: DataSource): Stores {
  return pgStores(ds.manager);
}
