/** The directory port over gRPC (CredentialService). */
import { directoryV1 } from '@iam/contracts';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { AppError, type Metrics, createGrpcClient } from '@iam/platform';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';

export function grpcDirectory(target: string, metrics: Metrics, credentials?: ChannelCredentials): Directory & { close(): void } {
  const client = createGrpcClient(directoryV1.CredentialServiceService, {
    target,
    metrics,
    credentials,
    defaultDeadlineMs: 10_000,
    idempotent: ['verifyCredentials', 'getPrincipal', 'findAccount', 'markEmailVerified'],
  });
  const toPrincipal = (p: directoryV1.Principal): Principal => ({ ...p });
  return {
    async verifyCredentials(email, password, opts = {}) {
      const r = await client.call.verifyCredentials({ email, password, skipEvaluation: opts.skipEvaluation ?? false });
      return { principal: r.valid && r.principal ? toPrincipal(r.principal) : null, accountExists: r.accountExists };
    },
    async principal(userId) {
      try {
        return toPrincipal(await client.call.getPrincipal({ userId }));
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
        throw err;
      }
    },
    async findAccount(email) {
      const r = await client.call.findAccount({ email });
      return r.found && r.principal ? toPrincipal(r.principal) : null;
    },
    async setPassword(userId, password, emailHash) {
      await client.call.setPassword({ userId, password, emailSha256: emailHash });
    },
    async markEmailVerified(userId, emailHash) {
      await client.call.markEmailVerified({ userId, emailSha256: emailHash });
    },
    close: () => client.close(),
  };
}
