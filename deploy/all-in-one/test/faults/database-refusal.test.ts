/**
 * Issue #26, defect 2, against the real processes: the directory's database refuses connections
 * (ALLOW_CONNECTIONS false: SQLSTATE 55000 at connect, and 57P01 for the sessions terminated) →
 * list, login and create answer 503 problem+json, never 500; once it accepts again, they work.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN, type Answer, Cluster, call, runnable, strongPassword } from './cluster';

(runnable ? describe : describe.skip)("fault: the directory's database refuses connections", () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await Cluster.start({ env: { UPSTREAM_TIMEOUT_MS: '3000' } });
  });

  afterAll(async () => {
    await c?.shutdown();
  });

  async function superuser(sql: string): Promise<void> {
    const db = new Client({ connectionString: c.pg.url('postgres') });
    await db.connect();
    try {
      await db.query(sql);
    } finally {
      await db.end();
    }
  }

  it('ALLOW_CONNECTIONS false: list, login and create → 503 problem+json; back to normal afterwards', async () => {
    const admin = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const user = () => ({ firstName: 'D', lastName: 'B', email: `refuse-${randomUUID()}@example.com`, password: strongPassword() });
    const requests = (): Promise<Answer[]> =>
      Promise.all([
        call(c.url, 'GET', '/api/v1/users?pageSize=1', { token: admin }),
        call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN }),
        call(c.url, 'POST', '/api/v1/users', { token: admin, body: user() }),
      ]);
    await superuser('ALTER DATABASE directory WITH ALLOW_CONNECTIONS false');
    await superuser("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'directory'");
    try {
      for (let round = 0; round < 3; round++) {
        for (const r of await requests()) {
          expect({ status: r.status, type: r.contentType }).toEqual({ status: 503, type: expect.stringContaining('application/problem+json') });
          expect(JSON.stringify(r.json)).not.toMatch(/55000|57P0|accepting connections|postgres|typeorm|at .*\.js/i);
        }
      }
    } finally {
      await superuser('ALTER DATABASE directory WITH ALLOW_CONNECTIONS true');
    }
    let answers = await requests();
    for (let i = 0; i < 40 && answers.some((a) => a.status !== 200 && a.status !== 201); i++) {
      await new Promise((r) => setTimeout(r, 250));
      answers = await requests();
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 201]);
  });
});
