/**
 * The directory service: composition of its use cases, repositories and gRPC handlers.
 */
import { STREAMS, directoryV1 } from '@iam/contracts';
import { bindService, type ServiceRuntime, type ServiceSpec } from '@iam/platform';
import type { DirectoryConfig } from './config';
import { entities, migrations } from './infra/schema';

export function directoryService(config: DirectoryConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'directory',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.directory, STREAMS.deadLetter],
    build: () => {
      const deps = { logger: rt.logger, metrics: rt.metrics, service: 'directory' };
      return {
        grpc: [
          bindService(directoryV1.UserServiceService, {}, deps),
          bindService(directoryV1.RoleServiceService, {}, deps),
          bindService(directoryV1.PermissionServiceService, {}, deps),
          bindService(directoryV1.RolePermissionServiceService, {}, deps),
          bindService(directoryV1.CredentialServiceService, {}, deps),
        ],
      };
    },
  };
}
