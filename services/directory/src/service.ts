/**
 * The directory service: the composition of its stores, hasher, use cases and gRPC handlers.
 */
import { STREAMS } from '@iam/contracts';
import type { ServiceRuntime, ServiceSpec } from '@iam/platform';
import type { DataSource } from 'typeorm';
import { directoryGrpc } from './api/grpc';
import { createAccessUseCases } from './app/access';
import { createCredentialUseCases } from './app/credentials';
import { createProvisioningUseCases } from './app/provisioning';
import { createLinkUseCases } from './app/links';
import { createPermissionUseCases, createRoleUseCases } from './app/roles';
import type { DirectoryUseCases } from './app/use-cases';
import { createUserUseCases } from './app/users';
import type { DirectoryConfig } from './config';
import { Argon2Hasher, BoundedQueue } from './infra/argon2-hasher';
import { entities, migrations } from './infra/schema';
import { purgeExpired } from './infra/credential-store';
import { pgPrivilegedStores, pgStores } from './infra/stores';
import { pgPrivilegedUnitOfWork, pgUnitOfWork } from './infra/unit-of-work';
import { UserSearch } from './infra/user-search';

export function createDirectoryUseCases(ds: DataSource, config: DirectoryConfig): DirectoryUseCases {
  // One user search per data source: its reading of the table's size is shared by every store.
  const options = { search: new UserSearch() };
  const uow = pgUnitOfWork(ds, options);
  // Statements outside any transaction, each committed on its own.
  const stores = pgStores(ds.manager, options);
  const hasher = new Argon2Hasher(config.argon2, new BoundedQueue(config.hashConcurrency, config.hashQueueLimit));
  return {
    users: createUserUseCases({ uow, stores, hasher }),
    roles: createRoleUseCases({ uow, stores }),
    permissions: createPermissionUseCases({ uow, stores }),
    links: createLinkUseCases({ uow, stores }),
    // Only the credential use cases see the password hashes.
    credentials: createCredentialUseCases({ uow: pgPrivilegedUnitOfWork(ds, options), stores: pgPrivilegedStores(ds.manager, options), hasher }),
    provisioning: createProvisioningUseCases({ uow: pgPrivilegedUnitOfWork(ds, options), stores: pgPrivilegedStores(ds.manager, options) }),
    access: createAccessUseCases({ stores }),
  };
}

export function directoryService(config: DirectoryConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'directory',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.directory, STREAMS.deadLetter],
    build: ({ dataSource }) => ({
      grpc: directoryGrpc(createDirectoryUseCases(dataSource, config), { logger: rt.logger, metrics: rt.metrics, service: 'directory', callKey: rt.callKey, peerNames: rt.grpcPeerNames }),
      housekeeping: () => purgeExpired(dataSource),
    }),
  };
}
