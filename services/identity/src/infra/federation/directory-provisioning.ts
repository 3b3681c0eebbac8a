/** AccountProvisioning over the directory's CredentialService (identity alone may call it). */
import { directoryV1 } from '@iam/contracts';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { type CallSigner, type Metrics, createGrpcClient } from '@iam/platform';
import type { AccountProvisioning } from '../../domain/federated-identities';

export function grpcProvisioning(target: string, metrics: Metrics, signer: CallSigner, credentials?: ChannelCredentials): AccountProvisioning & { close(): void } {
  const client = createGrpcClient(directoryV1.CredentialServiceService, {
    target,
    assert: { signer, to: 'directory' },
    metrics,
    credentials,
    defaultDeadlineMs: 10_000,
    // ProvisionUser is not retried: a second account must not be made by a retry.
    idempotent: ['hasPassword'],
  });
  return {
    async provisionUser(input) {
      const p = await client.call.provisionUser({ ...input, roles: [...input.roles] });
      return { userId: p.userId };
    },
    async hasPassword(userId) {
      return (await client.call.hasPassword({ userId })).hasPassword;
    },
    close: () => client.close(),
  };
}
