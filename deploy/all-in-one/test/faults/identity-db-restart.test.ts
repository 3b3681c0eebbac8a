/**
 * Fault 4 (issue #14): identity's PostgreSQL restarted during a stream of logins and refreshes →
 * requests during the outage get 503 problem+json (never a hang past the deadline, never a 500),
 * readiness flips and recovers with no process restarted, and no refresh family is left
 * half-rotated (each client keeps its old token or has the new one, and it still refreshes).
 */
import { randomUUID } from 'node:crypto';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type Answer, Cluster, call, runnable, strongPassword } from './cluster';

const CLIENTS = 10;
const TIMEOUT_MS = 2_000;

(runnable ? describe : describe.skip)("fault: identity's PostgreSQL restarted under logins and refreshes", () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await Cluster.start({ identityOwnPostgres: true, env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
  });

  afterAll(async () => {
    await c?.shutdown();
  });

  it('503 problem+json within the deadline during the outage; readiness flips and recovers; every family still refreshes', async () => {
    const admin = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const clients: Array<{ email: string; password: string; refresh: string }> = [];
    for (let i = 0; i < CLIENTS; i++) {
      const u = { email: `pg-${randomUUID()}@example.com`, password: strongPassword() };
      expect((await call(c.url, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'P', lastName: 'G', ...u } })).status).toBe(201);
      const r = await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: u });
      clients.push({ ...u, refresh: r.json.refreshToken as string });
    }
    const failures: Answer[] = [];
    const statuses = new Map<string, number>();
    let running = true;
    const loops = clients.map(async (cl) => {
      for (let i = 0; running; i++) {
        const login = i % 2 === 0;
        const r = login
          ? await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: { email: cl.email, password: cl.password }, timeoutMs: TIMEOUT_MS * 3 })
          : await call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: cl.refresh }, timeoutMs: TIMEOUT_MS * 3 });
        const key = `${login ? 'login' : 'refresh'} ${r.status}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (r.status === 200 && !login) cl.refresh = r.json.refreshToken;
        if (r.status !== 200) {
          failures.push(r);
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    });
    const pid = c.pid('identity');
    await new Promise((r) => setTimeout(r, 2_000));
    await c.identityPg.stop();
    const down = Date.now();
    await eventually(async () => (await c.ready('identity')) === 503, 15_000, 100);
    const gatewayReadyDuringOutage = await c.ready('gateway');
    await new Promise((r) => setTimeout(r, Math.max(0, 5_000 - (Date.now() - down))));
    await c.identityPg.start();
    const up = Date.now();
    await eventually(async () => (await c.ready('identity')) === 200, 30_000, 100);
    const readyAfterMs = Date.now() - up;
    await new Promise((r) => setTimeout(r, 3_000));
    running = false;
    await Promise.all(loops);
    process.stdout.write(
      `[fault identity-db] answers ${JSON.stringify(Object.fromEntries(statuses))}; slowest failure ${Math.round(Math.max(0, ...failures.map((f) => f.ms)))} ms; gateway readiness during the outage ${gatewayReadyDuringOutage}; identity ready ${readyAfterMs} ms after PostgreSQL returned\n`,
    );
    if (failures.some((f) => f.status >= 500 && f.status !== 503)) {
      const errors = (name: 'identity' | 'gateway') => c.log(name).split('\n').filter((l) => l.includes('"level":"error"') || l.includes('"level":50')).slice(0, 5).map((l) => l.slice(0, 800));
      process.stdout.write(`[fault identity-db] errors logged:\n${[...errors('identity'), ...errors('gateway')].join('\n')}\n`);
    }
    expect(c.pid('identity')).toBe(pid);
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(f.status).toBe(503);
      expect(f.contentType).toContain('application/problem+json');
      expect(JSON.stringify(f.json)).not.toMatch(/ECONNREFUSED|Error:|at .*\.js|postgres|typeorm/i);
      expect(f.ms).toBeLessThanOrEqual(TIMEOUT_MS * 1.1);
    }
    // No family half-rotated: each client's token (old or new) still refreshes.
    const after = await Promise.all(clients.map((cl) => call(c.url, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: cl.refresh } })));
    expect(after.map((a) => a.status)).toEqual(clients.map(() => 200));
  });
});
