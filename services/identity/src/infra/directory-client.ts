/** The directory port over gRPC (CredentialService). */
import { directoryV1 } from '@iam/contracts';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { AppError, type CallSigner, type Metrics, createGrpcClient } from '@iam/platform';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';

export function grpcDirectory(target: string, metrics: Metrics, signer: CallSigner, credentials?: ChannelCredentials): Directory & { close(): void } {
  const client = createGrpcClient(directoryV1.CredentialServiceService, {
    target,
    // The directory answers its credential service to identity alone, proven by this assertion.
    assert: { signer, to: 'directory' },
    metrics,
    credentials,
    defaultDeadlineMs: 10_000,
    // resetPassword too: a retry carries the same attempt id and gets the first call's answer.
    idempotent: ['verifyCredentials', 'getPrincipal', 'findAccount', 'markEmailVerified', 'resetPassword', 'resolveRoles', 'resolvePermissions'],
  });
  const toPrincipal = (p: directoryV1.Principal): Principal => ({ ...p });
  return {
    async verifyCredentials(email, password, opts = {}) {
      const r = await client.call.verifyCredentials({ email, password, skipEvaluation: opts.skipEvaluation ?? false });
      const principal = r.valid && r.principal ? toPrincipal(r.principal) : null;
      return { principal, accountExists: r.accountExists, accountId: r.accountId || undefined, passwordChangeRequired: principal !== null && r.passwordChangeRequired };
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
    async resetPassword(r) {
      const res = await client.call.resetPassword({ userId: r.userId, password: r.password, emailSha256: r.emailHash, resetId: r.resetId, attemptId: r.attemptId });
      return { changedAt: res.changedAt ?? new Date(), email: res.email, firstName: res.firstName };
    },
    async markEmailVerified(userId, emailHash) {
      await client.call.markEmailVerified({ userId, emailSha256: emailHash });
    },
    async changeRequiredPassword(userId, password) {
      await client.call.changeRequiredPassword({ userId, password });
    },
    async resolveRoles(names) {
      if (names.length === 0) return [];
      const r = await client.call.resolveRoles({ names: [...names] });
      return r.roles.map((role) => ({ name: role.name, permissions: [...role.permissions] }));
    },
    async resolvePermissions(names) {
      if (names.length === 0) return [];
      const r = await client.call.resolvePermissions({ names: [...names] });
      return r.permissions.map((p) => ({ name: p.name, description: p.description }));
    },
    close: () => client.close(),
  };
}
