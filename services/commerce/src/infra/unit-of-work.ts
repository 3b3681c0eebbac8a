import { outboxUnitOfWork } from '@iam/platform';
import type { DataSource } from 'typeorm';
import type { Stores, UnitOfWork } from '../domain/ports';
import { pgStores } from './stores';

/** Transactions over the commerce database; events go to the outbox in the same transaction. */
export function pgUnitOfWork(ds: DataSource): UnitOfWork {
  return outboxUnitOfWork(ds, pgStores);
}

/** Stores outside any transaction, for reads. */
export function pgReadStores(ds: DataSource): Stores {
  return pgStores(ds.manager);
}
