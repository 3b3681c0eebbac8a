/**
 * The directory's AccessService for tests that run a service without a directory: who holds which
 * permission now, changed by the test (a grant, a demotion), and an outage. In process
 * (`TestAccess` is an AccessCheck) or over gRPC on a loopback port (`startAccessServer`, for a
 * service that dials DIRECTORY_GRPC_TARGET).
 */
import { directoryV1 } from '@iam/contracts';
import { AppError } from '../errors';
import type { AccessCheck } from '../grpc/access';
import { GrpcHealth, bindService, startGrpcServer } from '../grpc/server';
import type { Logger } from '../logger';
import { createMetrics } from '../metrics';

export class TestAccess implements AccessCheck {
  private readonly held = new Map<string, Set<string>>();
  /** While true, every question is UNAVAILABLE (the directory cannot be reached). */
  down = false;
  /** How many questions were asked. */
  asked = 0;

  grant(userId: string, ...permissions: string[]): this {
    const set = this.held.get(userId) ?? new Set<string>();
    for (const p of permissions) set.add(p);
    this.held.set(userId, set);
    return this;
  }

  revoke(userId: string, ...permissions: string[]): this {
    for (const p of permissions) this.held.get(userId)?.delete(p);
    return this;
  }

  async holds(userId: string, permission: string): Promise<boolean> {
    this.asked++;
    if (this.down) throw AppError.unavailable('The directory cannot be reached (test).');
    return this.held.get(userId)?.has(permission) ?? false;
  }
}

/**
 * `access` served as directory.v1.AccessService on 127.0.0.1 (an OS-chosen port), answering
 * calls asserted with `callKey` (the key the commerce, audit or notification service under test is given).
 */
export async function startAccessServer(access: AccessCheck, logger: Logger, callKey: Buffer): Promise<{ target: string; close(): Promise<void> }> {
  const health = new GrpcHealth();
  const deps = { logger, metrics: createMetrics({ defaultMetrics: false }), service: 'directory', callKey };
  const server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    health,
    bindings: [bindService(directoryV1.AccessServiceService, { checkAccess: async (r) => ({ allowed: await access.holds(r.userId, r.permission) }) }, deps, ['commerce', 'audit', 'notification'])],
  });
  return { target: `127.0.0.1:${server.port}`, close: () => server.shutdown(1_000) };
}
