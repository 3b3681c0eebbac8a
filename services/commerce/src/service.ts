/**
 * The commerce service: the composition of its stores, use cases and gRPC handlers.
 */
import { STREAMS } from '@iam/contracts';
import type { ServiceRuntime, ServiceSpec } from '@iam/platform';
import type { DataSource } from 'typeorm';
import { commerceGrpc, type CommerceUseCases } from './api/grpc';
import { createCartUseCases } from './app/carts';
import { createCatalogUseCases } from './app/catalog';
import { createOrderUseCases } from './app/orders';
import { seedDemoCatalog } from './app/seed-demo';
import type { CommerceConfig } from './config';
import { entities, migrations } from './infra/schema';
import { purgeExpired } from './infra/stores';
import { pgReadStores, pgUnitOfWork } from './infra/unit-of-work';

export function createCommerceUseCases(ds: DataSource): CommerceUseCases {
  const deps = { uow: pgUnitOfWork(ds), read: pgReadStores(ds) };
  return {
    catalog: createCatalogUseCases(deps),
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
      return {
        grpc: commerceGrpc(createCommerceUseCases(dataSource), { logger: rt.logger, metrics: rt.metrics, service: 'commerce' }),
        housekeeping: () => purgeExpired(dataSource, config.idempotencyHours),
      };
    },
  };
}
