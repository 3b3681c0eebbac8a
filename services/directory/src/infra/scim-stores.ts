/** The SCIM use cases' stores (the organization stores and the SCIM ones) over one EntityManager, and their unit of work. */
import { outboxUnitOfWork } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { ScimConnectionStores } from '../app/scim-connections';
import type { UnitOfWork } from '../domain/ports';
import { pgOrganizationStores } from './organization-stores';
import { PgScimConnectionStore } from './scim-connection-store';
import { PgScimGroupStore, PgScimUserStore } from './scim-resource-store';
import type { StoreOptions } from './stores';

export function pgScimStores(m: EntityManager, options: StoreOptions = {}): ScimConnectionStores {
  return { ...pgOrganizationStores(m, options), scimConnections: new PgScimConnectionStore(m), scimUsers: new PgScimUserStore(m), scimGroups: new PgScimGroupStore(m) };
}

export function pgScimUnitOfWork(ds: DataSource, options: StoreOptions = {}): UnitOfWork<ScimConnectionStores> {
  return outboxUnitOfWork(ds, (m) => pgScimStores(m, options));
}
