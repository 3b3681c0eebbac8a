/**
 * Fault 6 (issue #14): the gateway is down while a token is revoked and a user deleted; when it
 * starts again, both tokens are refused from its first answer on (the denylist and the subject
 * revocations are loaded before it serves, not learnt later from events).
 */
import { directoryV1, identityV1 } from '@iam/contracts';
import { createGrpcClient } from '@iam/platform';
import { actingAs, testMetrics } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import { ADMIN, Cluster, call, runnable, strongPassword } from './cluster';

(runnable ? describe : describe.skip)('fault: gateway restarted after revocations it did not see', () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await Cluster.start();
  });

  afterAll(async () => {
    await c?.shutdown();
  });

  it('revoked tokens and deleted users are refused from the first answer after the restart', async () => {
    const login = await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN });
    const admin = { token: login.json.token as string, id: login.json.user.id as string };
    const user = async () => {
      const u = { email: `gw-${randomUUID()}@example.com`, password: strongPassword() };
      const r = await call(c.url, 'POST', '/api/v1/users', { token: admin.token, body: { firstName: 'G', lastName: 'W', ...u } });
      expect(r.status).toBe(201);
      const t = await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: u });
      return { id: r.json.id as string, token: t.json.token as string };
    };
    const [revoked, deleted, kept] = await Promise.all([user(), user(), user()]);
    // Authenticated but without users.manage: 403 means the token itself was accepted.
    const probe = (token: string) => call(c.url, 'GET', '/api/v1/users', { token, timeoutMs: 5_000 });
    for (const u of [revoked, deleted, kept]) expect((await probe(u.token)).status).toBe(403);

    await c.stop('gateway');
    const metrics = testMetrics();
    // Called as the gateway calls them: asserted with the cluster's INTERNAL_CALL_KEY.
    const signer = { key: Buffer.from(c.env.INTERNAL_CALL_KEY!, 'base64'), from: 'gateway' };
    const identity = createGrpcClient(identityV1.IdentityServiceService, { target: `127.0.0.1:${c.ports.identity}`, metrics, assert: { signer, to: 'identity' } });
    const directory = createGrpcClient(directoryV1.UserServiceService, { target: `127.0.0.1:${c.ports.directory}`, metrics, assert: { signer, to: 'directory' } });
    await identity.call.revoke({ accessToken: revoked.token });
    await actingAs(admin.id, () => directory.call.deleteUser({ id: deleted.id }));
    identity.close();
    directory.close();

    // Probe from the moment the process starts: never a 403 (accepted) for the two refused tokens.
    const seen = { revoked: new Set<number>(), deleted: new Set<number>() };
    let starting = true;
    const prober = (async () => {
      while (starting) {
        const [a, b] = await Promise.all([probe(revoked.token), probe(deleted.token)]);
        seen.revoked.add(a.status);
        seen.deleted.add(b.status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await c.start('gateway');
    starting = false;
    await prober;
    expect((await probe(revoked.token)).status).toBe(401);
    expect((await probe(deleted.token)).status).toBe(401);
    expect((await probe(kept.token)).status).toBe(403);
    process.stdout.write(`[fault gateway-restart] during start: revoked token saw ${[...seen.revoked].join('/')}, deleted user's token saw ${[...seen.deleted].join('/')}\n`);
    expect(seen.revoked.has(403)).toBe(false);
    expect(seen.deleted.has(403)).toBe(false);
  });
});
