/**
 * Fault 7 (issues #14, #26): identity killed (SIGKILL) in the middle of REST refresh rotations
 * and started again → no refresh token is ever accepted twice outside a retry, no family is lost
 * (a client whose answer died with the process retries its token within the grace period, here
 * opted in at 10 s: the default is 0, the spec's table), and reuse detection still works (a token
 * whose successor was used revokes its family). The provider's refreshes: op-refresh-kill.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { ADMIN, Cluster, call, runnable, strongPassword } from './cluster';

const CLIENTS = 20;

(runnable ? describe : describe.skip)('fault: identity SIGKILLed mid refresh rotations', () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await Cluster.start({ env: { UPSTREAM_TIMEOUT_MS: '2000', AUTH_REFRESH_REUSE_GRACE_SECONDS: '10' } });
  });

  afterAll(async () => {
    await c?.shutdown();
  });

  it('no token valid twice; reuse detection after the restart', async () => {
    const admin = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const clients: Array<{ current: string; previous?: string }> = [];
    for (let i = 0; i < CLIENTS; i++) {
      const u = { email: `kill-${randomUUID()}@example.com`, password: strongPassword() };
      expect((await call(c.url, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'K', lastName: 'L', ...u } })).status).toBe(201);
      const r = await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: u });
      clients.push({ current: r.json.refreshToken as string });
    }
    const accepted = new Map<string, number>();
    const statuses = new Map<number, number>();
    let running = true;

    const loops = clients.map(async (cl) => {
      while (running) {
        const presented = cl.current;
        const r = await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: presented }, timeoutMs: 10_000 });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 200) {
          accepted.set(presented, (accepted.get(presented) ?? 0) + 1);
          cl.previous = presented;
          cl.current = r.json.refreshToken;
        } else {
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    });
    await new Promise((r) => setTimeout(r, 2_000));
    await c.stop('identity', 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1_000));
    await c.start('identity');
    await new Promise((r) => setTimeout(r, 3_000));
    running = false;
    await Promise.all(loops);
    process.stdout.write(`[fault identity-kill] refresh answers ${JSON.stringify(Object.fromEntries(statuses))}; ${accepted.size} tokens accepted\n`);
    // Never a 401: a refresh interrupted by the kill is retried with the same token and succeeds.
    expect([...statuses.keys()].every((s) => s === 200 || s === 503 || s === 504 || s === 0)).toBe(true);
    // A token accepted twice only as a retry of an answer lost to the kill (at most one per client).
    expect([...accepted.values()].filter((n) => n > 2)).toEqual([]);
    expect([...accepted.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(CLIENTS);
    // No family lost: each client's newest token still refreshes.
    const older = new Map<(typeof clients)[number], string>();
    for (const cl of clients) {
      const r = await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: cl.current } });
      expect(r.status).toBe(200);
      older.set(cl, cl.current);
      cl.current = r.json.refreshToken;
    }
    // A token whose successor was used is reuse: refused, and the family revoked with it.
    for (const cl of clients.filter((x) => x.previous)) {
      expect((await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: cl.previous } })).status).toBe(401);
      expect((await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: cl.current } })).status).toBe(401);
    }
    expect(older.size).toBe(CLIENTS);
  });
});
