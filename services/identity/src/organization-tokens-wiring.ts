/** The organization-token exchange's composition (issue #41): one hook in service.ts. */
import type { ServiceBinding, ServiceRuntime } from '@iam/platform';
import { organizationTokensGrpc } from './api/organization-tokens-grpc';
import { createOrganizationTokenUseCases } from './app/organization-tokens';
import type { IdentityConfig } from './config';
import type { Directory, IdentityStores, TokenService } from './domain/ports';
import { grpcOrganizationGrants } from './infra/organization-grants-client';

export function organizationTokens(d: {
  config: IdentityConfig;
  rt: ServiceRuntime;
  stores: Pick<IdentityStores, 'refreshTokens' | 'subjects'>;
  principals: Pick<Directory, 'principal'>;
  tokens: Pick<TokenService, 'issue'>;
}): ServiceBinding[] {
  const grants = grpcOrganizationGrants(d.config.directoryTarget, d.rt.metrics, { key: d.rt.callKey, from: 'identity' }, d.rt.grpcClientCredentials);
  d.rt.lifecycle.onShutdown('identity organization grants client', async () => grants.close());
  const uc = createOrganizationTokenUseCases({ stores: d.stores, principals: d.principals, grants, tokens: d.tokens, accessExpirySeconds: d.config.jwt.expirySeconds });
  return organizationTokensGrpc(uc, { logger: d.rt.logger, metrics: d.rt.metrics, service: 'identity', callKey: d.rt.callKey, peerNames: d.rt.grpcPeerNames });
}
