/**
 * Authorization on the caller's current rights, for services that authorize their own work
 * (commerce's catalog writes, the audit trail's reads): a token's `permissions` claim says what
 * the user held when it was issued; the directory's AccessService says what they hold now. Asked
 * on every call, never cached, so a user demoted after their token was issued keeps the
 * permission in the token but not in effect. When the directory cannot answer, nothing is allowed
 * (UNAVAILABLE: the caller answers 503 and may retry).
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { directoryV1 } from '@iam/contracts';
import { AppError } from '../errors';
import type { Metrics } from '../metrics';
import type { CallSigner } from './assertion';
import { createGrpcClient } from './client';

export interface AccessCheck {
  /**
   * True when `userId` is a live user holding `permission` or the Administrator role; false for
   * anyone else. UNAVAILABLE when the directory cannot answer.
   */
  holds(userId: string, permission: string): Promise<boolean>;
}

/**
 * FORBIDDEN unless `actor` (the end user a call names) holds `permission` now; a call that names
 * nobody holds nothing. UNAVAILABLE when the directory cannot answer.
 */
export async function requireCurrentPermission(access: AccessCheck, actor: string | undefined, permission: string): Promise<void> {
  if (!actor) throw AppError.forbidden('The call does not name the user it acts for.');
  if (!(await access.holds(actor, permission))) throw AppError.forbidden(`This requires the ${permission} permission.`);
}

/** The directory's AccessService over gRPC (`DIRECTORY_GRPC_TARGET`); any failure to answer is UNAVAILABLE. */
export function grpcAccessCheck(opts: { target: string; metrics: Metrics; signer: CallSigner; credentials?: ChannelCredentials; deadlineMs?: number }): AccessCheck & { close(): void } {
  const client = createGrpcClient(directoryV1.AccessServiceService, {
    target: opts.target,
    assert: { signer: opts.signer, to: 'directory' },
    metrics: opts.metrics,
    credentials: opts.credentials,
    defaultDeadlineMs: opts.deadlineMs ?? 5_000,
    idempotent: ['checkAccess'],
  });
  return {
    async holds(userId, permission) {
      try {
        return (await client.call.checkAccess({ userId, permission })).allowed;
      } catch (err) {
        throw AppError.unavailable("The directory cannot confirm the caller's permissions now; try again shortly.", err);
      }
    },
    close: () => client.close(),
  };
}
