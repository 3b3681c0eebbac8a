/**
 * The directory's PostgreSQL stores, bound to one EntityManager (a transaction or the data
 * source): one file per store beside this one.
 */
import type { EntityManager } from 'typeorm';
import type { PrivilegedStores, Stores } from '../domain/ports';
import { PgCredentialStore } from './credential-store';
import { PgImportStore } from './import-store';
import { PgPermissionStore } from './permission-store';
import { PgPrincipalStore } from './principal-store';
import { PgRolePermissionStore } from './role-permission-store';
import { PgRoleStore } from './role-store';
import { UserSearch } from './user-search';
import { PgUserStore } from './user-store';

export interface StoreOptions {
  /**
   * The user search of this database, which the composition root makes once and every store over
   * the database shares (its table-size reading included); without one, these stores get their own.
   */
  readonly search?: UserSearch;
}

/** The stores every use case may get: none reads a password hash. */
export function pgStores(m: EntityManager, options: StoreOptions = {}): Stores {
  return {
    users: new PgUserStore(m, options.search ?? new UserSearch()),
    principals: new PgPrincipalStore(m),
    roles: new PgRoleStore(m),
    permissions: new PgPermissionStore(m),
    links: new PgRolePermissionStore(m),
  };
}

/** The credential use cases' stores: the others and the password hashes (Kratos' PrivilegedPool). */
export function pgPrivilegedStores(m: EntityManager, options: StoreOptions = {}): PrivilegedStores {
  return { ...pgStores(m, options), credentials: new PgCredentialStore(m), imports: new PgImportStore(m) };
}
