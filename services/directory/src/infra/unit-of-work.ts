import { outboxUnitOfWork } from '@iam/platform';
import type { DataSource } from 'typeorm';
import type { Stores, UnitOfWork } from '../domain/ports';
import { type StoreOptions, pgStores } from './stores';

/** Transactions over the directory database; events go to the outbox in the same transaction. */
export function pgUnitOfWork(ds: DataSource, options: StoreOptions): UnitOfWork {
  return outboxUnitOfWork(ds, (m) => pgStores(m, options));
}

/** Stores outside any transaction, for reads. */
export function pgReadStores(ds: DataSource, options: StoreOptions): Stores {
  return pgStores(ds.manager, options);
}
