/**
 * The federation's parts as the composition root (service.ts) builds them: the directory's
 * provisioning over gRPC, the relying parties (client secrets opened with the key-encryption keys),
 * and the use cases, with the callback URL each upstream registers.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { CallSigner, Metrics } from '@iam/platform';
import { type FederationUseCases, createFederationUseCases } from '../../app/federation';
import { providerSecretAad } from '../../domain/identity-providers';
import type { Directory, IdentityStores, UnitOfWork } from '../../domain/ports';
import type { SealingKeys } from '../../domain/sealing';
import { grpcProvisioning } from './directory-provisioning';
import type { PresetEndpoints } from './upstream-client';
import { createUpstreams } from './upstreams';

/** An upstream's redirect URI: under the provider's prefix, one per provider. */
export const federationCallbackUrl = (publicUrl: string, prefix: string, providerName: string): string => `${publicUrl}${prefix}/federation/${providerName}/callback`;

export function wireFederation(deps: {
  publicUrl: string;
  prefix: string;
  directoryTarget: string;
  metrics: Metrics;
  signer: CallSigner;
  credentials?: ChannelCredentials;
  uow: UnitOfWork;
  stores: IdentityStores;
  directory: Pick<Directory, 'findAccount'>;
  kek: SealingKeys;
  /** Tests point GitHub and Google at local stand-ins. */
  presets?: PresetEndpoints;
}): { federation: FederationUseCases; close(): void } {
  const provisioning = grpcProvisioning(deps.directoryTarget, deps.metrics, deps.signer, deps.credentials);
  const rps = createUpstreams({
    secretOf: async (p) => {
      const sealed = await deps.stores.identityProviders.sealedSecret(p.id);
      return sealed ? deps.kek.open(sealed, providerSecretAad(p.id)).toString('utf8') : null;
    },
    ...(deps.presets ? { presets: deps.presets } : {}),
  });
  const federation = createFederationUseCases({
    uow: deps.uow,
    stores: deps.stores,
    directory: deps.directory,
    provisioning,
    rps,
    callbackUrl: (name) => federationCallbackUrl(deps.publicUrl, deps.prefix, name),
  });
  return { federation, close: () => provisioning.close() };
}
