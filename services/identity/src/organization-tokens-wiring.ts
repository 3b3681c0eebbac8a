/**
 * The organizations' composition (issue #41): one client of the directory's membership lookup
 * (OrganizationAccessService) for the sign-in flow's organization gate, the provider's
 * organization-token grant and ID-token claim, and the REST exchange.
 */
import type { ServiceBinding, ServiceRuntime } from '@iam/platform';
import { organizationTokensGrpc } from './api/organization-tokens-grpc';
import { type OrganizationGrants, createOrganizationTokenUseCases } from './app/organization-tokens';
import type { IdentityConfig } from './config';
import type { Directory, IdentityStores, TokenService } from './domain/ports';
import { grpcOrganizationGrants } from './infra/organization-grants-client';

/** The directory's answer about memberships, closed at shutdown. */
export function organizationGrants(config: IdentityConfig, rt: ServiceRuntime): OrganizationGrants {
  const grants = grpcOrganizationGrants(config.directoryTarget, rt.metrics, { key: rt.callKey, from: 'identity' }, rt.grpcClientCredentials);
  rt.lifecycle.onShutdown('identity organization grants client', async () => grants.close());
  return grants;
}

/** The REST exchange (`POST /api/v1/auth/organization-token`, through the gateway). */
export function organizationTokens(d: {
  config: IdentityConfig;
  rt: ServiceRuntime;
  grants: OrganizationGrants;
  stores: Pick<IdentityStores, 'refreshTokens' | 'subjects'>;
  principals: Pick<Directory, 'principal'>;
  tokens: Pick<TokenService, 'issue'>;
}): ServiceBinding[] {
  const uc = createOrganizationTokenUseCases({ stores: d.stores, principals: d.principals, grants: d.grants, tokens: d.tokens, accessExpirySeconds: d.config.jwt.expirySeconds });
  return organizationTokensGrpc(uc, { logger: d.rt.logger, metrics: d.rt.metrics, service: 'identity', callKey: d.rt.callKey, peerNames: d.rt.grpcPeerNames });
}
