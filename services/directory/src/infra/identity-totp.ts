/**
 * Identity's ImportTotp over gRPC, as the bulk import calls it (issue #39), signed with the
 * directory's call assertion (identity answers that method to the directory alone). The client is
 * made at the first call: in the all-in-one process identity starts after the directory, so its
 * address is known only then.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { identityV1 } from '@iam/contracts';
import { type CallSigner, type ClientHandle, type Metrics, createGrpcClient } from '@iam/platform';
import type { TotpImporter } from '../domain/ports';

export function grpcTotpImporter(target: () => string, deps: { signer: CallSigner; metrics: Metrics; credentials?: ChannelCredentials }): TotpImporter & { close(): void } {
  let client: ClientHandle<typeof identityV1.IdentityServiceService> | undefined;
  const connect = () =>
    (client ??= createGrpcClient(identityV1.IdentityServiceService, {
      target: target(),
      assert: { signer: deps.signer, to: 'identity' },
      metrics: deps.metrics,
      credentials: deps.credentials,
      defaultDeadlineMs: 10_000,
      // A retry enrols the same secret: identity answers "unchanged".
      idempotent: ['importTotp'],
    }));
  return {
    async importTotp(userId, totp) {
      const r = await connect().call.importTotp({ userId, ...totp });
      return r.outcome === 'unchanged' ? 'unchanged' : 'enrolled';
    },
    close: () => client?.close(),
  };
}
