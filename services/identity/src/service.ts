/**
 * The identity service: composition of its use cases, repositories and gRPC handlers.
 */
import { STREAMS, identityV1 } from '@iam/contracts';
import { bindService, type ServiceRuntime, type ServiceSpec } from '@iam/platform';
import type { IdentityConfig } from './config';
import { entities, migrations } from './infra/schema';

export function identityService(config: IdentityConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'identity',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.identity, STREAMS.directory, STREAMS.deadLetter],
    build: () => {
      const deps = { logger: rt.logger, metrics: rt.metrics, service: 'identity' };
      return { grpc: [bindService(identityV1.IdentityServiceService, {}, deps)] };
    },
  };
}
