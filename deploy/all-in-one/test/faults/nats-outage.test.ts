/**
 * Fault 3 (issue #14): NATS stopped for 60 s while 1,000 password resets are requested → every
 * request answered 202 (none fails), and once NATS is back, 1,000 mails, once each (no process
 * dies here, so at-least-once delivery sends none twice).
 */
import { randomUUID } from 'node:crypto';
import { type SmtpSink, eventually, startSmtpSink } from '@iam/platform/testing';
import { Client } from 'pg';
import { ADMIN, Cluster, call, runnable, strongPassword } from './cluster';

const USERS = 1_000;
const OUTAGE_MS = 60_000;

(runnable ? describe : describe.skip)('fault: NATS down for 60 s under 1,000 reset requests', () => {
  let c: Cluster;
  let smtp: SmtpSink;
  const emails: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpSink();
    c = await Cluster.start({ smtpPort: smtp.port, env: { EMAIL_ACTION_MAX_PER_HOUR: '10' } });
    const admin = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    // One user through the API (its hash is a real argon2id hash), the rest copied in bulk.
    const first = { email: `nats-0-${randomUUID()}@example.com`, password: strongPassword() };
    expect((await call(c.url, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'N', lastName: 'A', ...first } })).status).toBe(201);
    emails.push(first.email);
    const db = new Client({ connectionString: c.pg.url('directory') });
    await db.connect();
    const more = Array.from({ length: USERS - 1 }, (_, i) => `nats-${i + 1}-${randomUUID()}@example.com`);
    await db.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash)
       SELECT gen_random_uuid(), 'N', 'A', e, (SELECT password_hash FROM users WHERE email = $1) FROM unnest($2::text[]) AS e`,
      [first.email, more],
    );
    await db.end();
    emails.push(...more);
  });

  afterAll(async () => {
    await c?.shutdown();
    await smtp?.close();
  });

  it('1,000 requests during the outage all get 202; after it every mail arrives, once each', async () => {
    await c.nats.stop('SIGKILL');
    const outageEnds = Date.now() + OUTAGE_MS;
    const statuses = new Map<number, number>();
    let slowest = 0;
    // 1,000 requests spread over the first half of the outage, 20 at a time.
    for (let i = 0; i < USERS; i += 20) {
      const batch = await Promise.all(emails.slice(i, i + 20).map((email) => call(c.url, 'POST', '/api/v1/auth/password-reset/request', { body: { email }, timeoutMs: 10_000 })));
      for (const r of batch) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        slowest = Math.max(slowest, r.ms);
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 202: USERS });
    // Nothing reaches the mail while NATS is down.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(smtp.mails).toHaveLength(0);
    await new Promise((r) => setTimeout(r, Math.max(0, outageEnds - Date.now())));
    const back = Date.now();
    await c.nats.start();
    await eventually(() => smtp.mails.length >= USERS, 240_000, 500);
    const deliveredAfterMs = Date.now() - back;
    await new Promise((r) => setTimeout(r, 3_000));
    const perRecipient = new Map<string, number>();
    for (const m of smtp.mails) for (const to of m.to) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
    const missing = emails.filter((e) => !perRecipient.has(e));
    const repeated = [...perRecipient].filter(([, n]) => n > 1);
    process.stdout.write(`[fault nats] ${USERS} × 202 (slowest ${Math.round(slowest)} ms) during a ${OUTAGE_MS / 1000} s outage; all mails ${Math.round(deliveredAfterMs / 1000)} s after NATS returned; missing ${missing.length}, repeated ${repeated.length}\n`);
    expect(missing).toEqual([]);
    expect(repeated).toEqual([]);
    expect(smtp.mails).toHaveLength(USERS);
  });
});
