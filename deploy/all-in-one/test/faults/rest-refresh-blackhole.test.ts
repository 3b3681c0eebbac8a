/**
 * Issue #35 (a remark of its fault run, with the REST grace now 0 by default): a REST refresh
 * caught in a network blackhole between identity and its database. The gateway answers 503/504 at
 * its deadline; the statements identity had sent were held in the network and, once it healed,
 * used to run: the rotation committed after the client had been told it failed, so the client's
 * retry with the token it holds was a reuse (401, the family revoked). Identity's gRPC handlers now
 * bound their queries by the call's deadline (grpc/server.ts, db/query-deadline.ts): a query that
 * has no answer by then has its connection reset, and nothing commits later. The retry succeeds.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { eventually } from '@iam/platform/testing';
import { ADMIN, Cluster, call, runnable, strongPassword } from './cluster';
import { FaultProxy } from './proxy';

const TIMEOUT_MS = 2_000;

(runnable ? describe : describe.skip)("fault: a REST refresh caught in a blackhole to identity's database", () => {
  let c: Cluster;
  let proxy: FaultProxy | undefined;

  beforeAll(async () => {
    c = await Cluster.start({
      identityOwnPostgres: true,
      env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) },
      identityDatabaseVia: async (port) => {
        proxy = await FaultProxy.start(port);
        return proxy.port;
      },
    });
  });

  afterAll(async () => {
    await c?.shutdown();
    await proxy?.close();
  });

  const rotatedAt = async (token: string) => {
    const db = new Client({ connectionString: c.identityPg.url('identity') });
    await db.connect();
    try {
      return (await db.query('SELECT rotated_at, revoked_at FROM refresh_tokens WHERE token_hash = sha256($1::bytea)', [Buffer.from(token)])).rows[0] as { rotated_at: Date | null; revoked_at: Date | null };
    } finally {
      await db.end();
    }
  };

  it('503/504 at the deadline, nothing rotated once the network heals, and the same token refreshes', async () => {
    const admin = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const u = { email: `hole-${randomUUID()}@example.com`, password: strongPassword() };
    expect((await call(c.url, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'B', lastName: 'H', ...u } })).status).toBe(201);
    const first = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: u })).json.refreshToken as string;
    // A refresh first: identity keeps the user's principal, so the next one asks the directory
    // nothing (a call that would have run into the deadline) and only its database is in the way.
    const warmed = await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: first } });
    expect(warmed.status).toBe(200);
    const token = warmed.json.refreshToken as string;
    proxy!.set({ kind: 'blackhole' });
    let lost;
    try {
      lost = await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: token }, timeoutMs: TIMEOUT_MS * 5 });
      // A while longer in the blackhole, as a partition lasts.
      await new Promise((r) => setTimeout(r, TIMEOUT_MS));
    } finally {
      proxy!.set({ kind: 'pass' });
    }
    expect([503, 504]).toContain(lost.status);
    // Identity serves again (a login goes through its database).
    await eventually(async () => (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: u, timeoutMs: 5_000 })).status === 200, 30_000, 200);
    expect(await rotatedAt(token)).toEqual({ rotated_at: null, revoked_at: null });
    const retried = await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: token } });
    expect(retried.status).toBe(200);
  });
});
