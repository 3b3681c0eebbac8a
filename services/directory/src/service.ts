/**
 * The directory service: the composition of its stores, hasher, use cases and gRPC handlers.
 */
import { STREAMS } from '@iam/contracts';
import type { ServiceRuntime, ServiceSpec } from '@iam/platform';
import type { DataSource } from 'typeorm';
import { directoryGrpc } from './api/grpc';
import { organizationsGrpc } from './api/organizations-grpc';
import { scimGrpc } from './api/scim-grpc';
import { createAccessUseCases } from './app/access';
import { type CredentialDeps, createCredentialUseCases } from './app/credentials';
import { createImportUseCases } from './app/import-users';
import { createProvisioningUseCases } from './app/provisioning';
import { createLinkUseCases } from './app/links';
import { createDomainUseCases } from './app/domains';
import { createInvitationUseCases } from './app/invitations';
import { createOrganizationRoleUseCases } from './app/organization-roles';
import { createOrganizationUseCases } from './app/organizations';
import { createScimConnectionUseCases } from './app/scim-connections';
import { createScimServer } from './app/scim/handler';
import { pgScimStores, pgScimUnitOfWork } from './infra/scim-stores';
import { createPermissionUseCases, createRoleUseCases } from './app/roles';
import type { DirectoryUseCases } from './app/use-cases';
import { createUserUseCases } from './app/users';
import type { DirectoryConfig } from './config';
import { Argon2Hasher, BoundedQueue } from './infra/argon2-hasher';
import { entities, migrations } from './infra/schema';
import { purgeExpired } from './infra/credential-store';
import type { TxtResolver } from './domain/organizations';
import { NodeTxtResolver } from './infra/dns-resolver';
import { pgOrganizationStores, pgOrganizationUnitOfWork } from './infra/organization-stores';
import { httpMigrationHook } from './infra/migration-hook';
import { PlatformPasswordHasher } from './infra/password-hasher';
import type { TotpImporter } from './domain/ports';
import { grpcTotpImporter } from './infra/identity-totp';
import { passwordMetrics } from './infra/password-metrics';
import { pgPrivilegedStores, pgStores } from './infra/stores';
import { pgPrivilegedUnitOfWork, pgUnitOfWork } from './infra/unit-of-work';
import { UserSearch } from './infra/user-search';

/**
 * `observe`: the password metrics' hooks; `resolver`: DNS TXT lookups of domain verification (a
 * stub in tests); `totp`: identity's ImportTotp for the bulk import (absent: imported TOTP factors
 * are reported as not imported).
 */
export function createDirectoryUseCases(ds: DataSource, config: DirectoryConfig, observe?: CredentialDeps['observe'], resolver: TxtResolver = new NodeTxtResolver(), totp?: TotpImporter): DirectoryUseCases {
  // One user search per data source: its reading of the table's size is shared by every store.
  const options = { search: new UserSearch() };
  const uow = pgUnitOfWork(ds, options);
  // Statements outside any transaction, each committed on its own.
  const stores = pgStores(ds.manager, options);
  const queue = new BoundedQueue(config.hashConcurrency, config.hashQueueLimit);
  // argon2id for new hashes. Imported families verify through a queue of their own, bounded the
  // same way but not by predicted waits: a slow legacy check (bcrypt at cost 12 takes a second on
  // a loaded machine) must not teach argon2's queue a wait that refuses every login, nor be
  // refused forever by its own slowness; each user's legacy hash is checked once, then rehashed.
  const legacyQueue = new BoundedQueue(config.hashConcurrency, config.hashQueueLimit, () => undefined);
  const hasher = new PlatformPasswordHasher(new Argon2Hasher(config.argon2, queue), legacyQueue);
  const migrationHook = config.migrationHook && httpMigrationHook(config.migrationHook);
  const privilegedUow = pgPrivilegedUnitOfWork(ds, options);
  return {
    users: createUserUseCases({ uow, stores, hasher }),
    roles: createRoleUseCases({ uow, stores }),
    permissions: createPermissionUseCases({ uow, stores }),
    links: createLinkUseCases({ uow, stores }),
    // Only the credential use cases see the password hashes.
    credentials: createCredentialUseCases({ uow: privilegedUow, stores: pgPrivilegedStores(ds.manager, options), hasher, migrationHook, observe }),
    provisioning: createProvisioningUseCases({ uow: privilegedUow, stores: pgPrivilegedStores(ds.manager, options) }),
    access: createAccessUseCases({ stores }),
    imports: createImportUseCases({ uow: privilegedUow, hashes: hasher, totp }),
    ...organizationUseCases(ds, options, config, resolver),
  };
}

/** Organizations (issue #41): their own stores and unit of work over the directory's database. */
function organizationUseCases(
  ds: DataSource,
  options: { search: UserSearch },
  config: DirectoryConfig,
  resolver: TxtResolver,
): Pick<DirectoryUseCases, 'organizations' | 'organizationRoles' | 'invitations' | 'domains' | 'scimConnections' | 'scim'> {
  const deps = { uow: pgOrganizationUnitOfWork(ds, options), stores: pgOrganizationStores(ds.manager, options) };
  const scimDeps = { uow: pgScimUnitOfWork(ds, options), stores: pgScimStores(ds.manager, options) };
  const scimConnections = createScimConnectionUseCases(scimDeps);
  return {
    scimConnections,
    scim: createScimServer({ ...scimDeps, connections: scimConnections }),
    organizations: createOrganizationUseCases(deps),
    organizationRoles: createOrganizationRoleUseCases(deps),
    invitations: createInvitationUseCases({ ...deps, sealKey: config.invitationSealKey, days: config.invitationDays }),
    domains: createDomainUseCases({ ...deps, resolver }),
  };
}

/**
 * `opts.resolver`: the TXT lookups of domain verification (tests pass a stub; `node:dns/promises`
 * otherwise); `opts.identityTarget`: where identity answers, when known only once it started (the
 * all-in-one process); else IDENTITY_GRPC_TARGET.
 */
export function directoryService(config: DirectoryConfig, rt: ServiceRuntime, opts: { resolver?: TxtResolver; identityTarget?: () => string } = {}): ServiceSpec {
  return {
    name: 'directory',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.directory, STREAMS.deadLetter],
    build: ({ dataSource }) => {
      const totp = grpcTotpImporter(opts.identityTarget ?? (() => config.identityTarget), { signer: { key: rt.callKey, from: 'directory' }, metrics: rt.metrics, credentials: rt.grpcClientCredentials });
      const uc = createDirectoryUseCases(dataSource, config, passwordMetrics(rt.metrics.registry, dataSource), opts.resolver, totp);
      const deps = { logger: rt.logger, metrics: rt.metrics, service: 'directory', callKey: rt.callKey, peerNames: rt.grpcPeerNames };
      return {
        grpc: [...directoryGrpc(uc, deps), ...organizationsGrpc(uc, deps), ...scimGrpc(uc, deps)],
        housekeeping: async () => {
          await purgeExpired(dataSource);
          await uc.domains.recheck();
        },
        stop: async () => totp.close(),
      };
    },
  };
}
