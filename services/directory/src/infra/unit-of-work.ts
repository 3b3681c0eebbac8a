import { outboxUnitOfWork } from '@iam/platform';
import type { DataSource } from 'typeorm';
import type { PrivilegedUnitOfWork, UnitOfWork } from '../domain/ports';
import { type StoreOptions, pgPrivilegedStores, pgStores } from './stores';

/** Transactions over the directory database; events go to the outbox in the same transaction. */
export function pgUnitOfWork(ds: DataSource, options: StoreOptions): UnitOfWork {
  return outboxUnitOfWork(ds, (m) => pgStores(m, options));
}

/** The same, whose transactions also see the password hashes (the credential use cases'). */
export function pgPrivilegedUnitOfWork(ds: DataSource, options: StoreOptions): PrivilegedUnitOfWork {
  return outboxUnitOfWork(ds, (m) => pgPrivilegedStores(m, options));
}
