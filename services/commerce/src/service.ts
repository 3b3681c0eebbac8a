/**
 * The commerce service: the composition of its stores, use cases, gRPC handlers and the
 * directory's AccessService client (catalog writes are authorized on the caller's current rights).
 */
import { STREAMS } from '@iam/contracts';
import { type AccessCheck, type ServiceRuntime, type ServiceSpec, grpcAccessCheck } from '@iam/platform';
import type { DataSource } from 'typeorm';
import { commerceGrpc } from './api/grpc';
import { createCartUseCases } from './app/carts';
import { createCatalogUseCases } from './app/catalog';
import { createOrderUseCases } from './app/orders';
import { seedDemoCatalog } from './app/seed-demo';
import type { CommerceUseCases } from './app/use-cases';
import type { CommerceConfig } from './config';
import { entities, migrations } from './infra/schema';
import { purgeExpired } from './infra/stores';
import { pgReadStores, pgUnitOfWork } from './infra/unit-of-work';

/** `access` answers whether a caller holds products.manage now (the directory, in production). */
export function createCommerceUseCases(ds: DataSource, access: AccessCheck): CommerceUseCases {
  const deps = { uow: pgUnitOfWork(ds), read: pgReadStores(ds) };
  return {
    catalog: createCatalogUseCases({ ...deps, access }),
    carts: createCartUseCases(deps),
    orders: createOrderUseCases(deps),
  };
}

export function commerceService(config: CommerceConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'commerce',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.commerce, STREAMS.deadLetter],
    build: async ({ dataSource, logger }) => {
      if (config.seedDemo) await seedDemoCatalog(dataSource, logger);
      const access = grpcAccessCheck({ target: config.directoryTarget, metrics: rt.metrics, signer: { key: rt.callKey, from: 'commerce' }, credentials: rt.grpcClientCredentials });
      return {
        grpc: commerceGrpc(createCommerceUseCases(dataSource, access), { logger: rt.logger, metrics: rt.metrics, service: 'commerce', callKey: rt.callKey, peerNames: rt.grpcPeerNames }),
        housekeeping: () => purgeExpired(dataSource, config.idempotencyHours),
        stop: async () => access.close(),
      };
    },
  };
}
