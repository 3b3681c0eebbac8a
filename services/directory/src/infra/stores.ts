/**
 * The directory's PostgreSQL stores, bound to one EntityManager (a transaction or the data
 * source): one file per store beside this one.
 */
import type { EntityManager } from 'typeorm';
import type { Stores } from '../domain/ports';
import { PgCredentialStore } from './credential-store';
import { PgPermissionStore } from './permission-store';
import { PgRolePermissionStore } from './role-permission-store';
import { PgRoleStore } from './role-store';
import { SEARCH_SMALL_TABLE } from './user-search';
import { PgUserStore } from './user-store';

export interface StoreOptions {
  /** Tables up to this many rows are searched without the planner's estimate (tests set 0 to reach the other path). */
  readonly searchSmallTable?: number;
}

export function pgStores(m: EntityManager, options: StoreOptions = {}): Stores {
  return {
    users: new PgUserStore(m, options.searchSmallTable ?? SEARCH_SMALL_TABLE),
    credentials: new PgCredentialStore(m),
    roles: new PgRoleStore(m),
    permissions: new PgPermissionStore(m),
    links: new PgRolePermissionStore(m),
  };
}
