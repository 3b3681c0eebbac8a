export { readCommerceConfig, type CommerceConfig } from './config';
export { commerceService, createCommerceUseCases } from './service';
export { seedDemoCatalog, DEMO_CATALOG } from './app/seed-demo';
export { runSeedDemo } from './cli/seed-demo';
export { REASONS, reasonOf, type Reason } from './domain/errors';
