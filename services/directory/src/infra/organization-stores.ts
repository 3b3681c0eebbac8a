/**
 * The organization use cases' stores over one EntityManager (a transaction or the data source),
 * and their unit of work: the directory's stores (users, permissions) beside the organization ones.
 */
import { outboxUnitOfWork } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { OrgUseCaseStores } from '../domain/organizations';
import type { UnitOfWork } from '../domain/ports';
import { PgDomainStore } from './domain-store';
import { PgInvitationStore } from './invitation-store';
import { PgMemberStore } from './member-store';
import { PgOrganizationRoleStore } from './organization-role-store';
import { PgOrganizationStore } from './organization-store';
import { type StoreOptions, pgStores } from './stores';

export function pgOrganizationStores(m: EntityManager, options: StoreOptions = {}): OrgUseCaseStores {
  const { users, principals, permissions } = pgStores(m, options);
  return { users, principals, permissions, organizations: new PgOrganizationStore(m), organizationRoles: new PgOrganizationRoleStore(m), members: new PgMemberStore(m),
    invitations: new PgInvitationStore(m),
    domains: new PgDomainStore(m),
  };
}

export function pgOrganizationUnitOfWork(ds: DataSource, options: StoreOptions = {}): UnitOfWork<OrgUseCaseStores> {
  return outboxUnitOfWork(ds, (m) => pgOrganizationStores(m, options));
}
