/**
 * The audit trail end to end (#15): requests through the gateway, events through the outbox and
 * the bus (the real NATS when reachable), entries recorded by the audit service's consumers and
 * read back through `GET /api/v1/audit-events` (audit.read). Who did it, from which IP and user
 * agent, what changed; never a secret; tampering found by verify.
 */
import { type SmtpSink, actionToken, eventually, startSmtpSink } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

interface Entry {
  seq: number;
  action: string;
  actor: { type: string; id: string | null; email: string | null };
  target: { type: string; id: string };
  changes: Array<{ field: string; before?: unknown; after?: unknown; redacted?: boolean }>;
  clientIp: string | null;
  userAgent: string | null;
  traceId: string | null;
}

describe('audit trail (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  let adminId: string;
  let smtp: SmtpSink;
  /** Every log line of the system, and every secret the tests used: none may appear in a line. */
  const logLines: string[] = [];
  const secrets: string[] = [];
  const UA = 'audit-e2e/1.0 (test)';
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) =>
    http(sys.url(), method, path, { token: admin, ...opts, headers: { 'user-agent': UA, ...opts.headers } });
  const entries = async (query: string): Promise<Entry[]> => {
    const r = await call('GET', `/api/v1/audit-events?${query}`);
    expect(r.status).toBe(200);
    return r.json.items as Entry[];
  };
  const until = async (query: string, found: (items: Entry[]) => Entry | undefined): Promise<Entry> => eventually(async () => found(await entries(query)), 10_000, 100);

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sys = await startTestSystem({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: 'https://app.example' }, logLines });
    const login = await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN });
    admin = login.json.token;
    adminId = login.json.user.id;
  });

  afterAll(async () => {
    await sys?.stop();
    await smtp?.close();
  });

  afterAll(() => {
    // Checked last (after the other tests added their secrets): no password, token or guess in any log line.
    expect(logLines.length).toBeGreaterThan(0);
    const leaked = secrets.filter((s) => logLines.some((l) => l.includes(s)));
    expect(leaked).toEqual([]);
  });

  it('a grant of Administrator: actor (id, email), target, roles before/after, client IP, user agent, trace id', async () => {
    const password = strongPassword();
    secrets.push(password);
    const bob = await call('POST', '/api/v1/users', { body: { firstName: 'Bob', lastName: 'Audit', email: uniqueEmail('bob'), password } });
    expect(bob.status).toBe(201);
    const put = await call('PUT', `/api/v1/users/${bob.json.id}`, { body: { roles: ['Administrator'] } });
    expect(put.status).toBe(200);
    const grant = await until(`targetId=${bob.json.id}&action=user.roles.`, (items) => items[0]);
    expect(grant).toMatchObject({
      action: 'user.roles.changed',
      actor: { type: 'user', id: adminId, email: ADMIN.email },
      target: { type: 'user', id: bob.json.id },
      changes: [{ field: 'roles', before: [], after: ['Administrator'] }],
      clientIp: '127.0.0.1',
      userAgent: UA,
    });
    expect(grant.traceId).toBe(put.headers.get('x-trace-id'));
    const created = await until(`targetId=${bob.json.id}&action=user.created`, (items) => items[0]);
    expect(created.changes.map((c) => c.field)).toEqual(['email', 'firstName', 'lastName', 'emailVerified', 'roles']);
    // No secret anywhere in the trail: not the password, not a hash.
    const all = JSON.stringify(await entries('pageSize=100'));
    expect(all).not.toContain(password);
    expect(all).not.toMatch(/\$argon2/);
  });

  it('a password reset: requested, completed, sessions ended; neither the token nor the password recorded', async () => {
    const email = uniqueEmail('reset');
    const user = await call('POST', '/api/v1/users', { body: { firstName: 'Rita', lastName: 'Reset', email, password: strongPassword() } });
    expect((await call('POST', '/api/v1/auth/password-reset/request', { body: { email }, token: undefined })).status).toBe(202);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && actionToken(m, 'reset-password') !== undefined);
    const token = actionToken(mail, 'reset-password')!;
    const next = strongPassword();
    secrets.push(token, next);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token, newPassword: next }, token: undefined })).status).toBe(204);
    const trail = await eventually(async () => {
      const items = await entries(`targetId=${user.json.id}&pageSize=100`);
      // Each recorded from its own stream, in no fixed order between them.
      const actions = new Set(items.map((e) => e.action));
      return ['sessions.revoked', 'password.reset.completed', 'password.changed'].every((a) => actions.has(a)) ? items : undefined;
    }, 10_000, 100);
    expect(trail.map((e) => e.action)).toEqual(expect.arrayContaining(['user.created', 'password.reset.requested', 'password.reset.completed', 'password.changed', 'sessions.revoked']));
    expect(trail.find((e) => e.action === 'password.reset.completed')!.changes).toEqual([{ field: 'password', redacted: true }]);
    // Processed later by identity's worker, the request still names where it came from.
    expect(trail.find((e) => e.action === 'password.reset.requested')).toMatchObject({ actor: { type: 'anonymous' }, clientIp: '127.0.0.1', userAgent: UA });
    const text = JSON.stringify(trail);
    expect(text).not.toContain(token);
    expect(text).not.toContain(next);
  });

  it('an attack on an account: failed logins and the lockout (anonymous, with the client IP), never the password tried; a success names the user', async () => {
    const email = uniqueEmail('target');
    const password = strongPassword();
    const user = (await call('POST', '/api/v1/users', { body: { firstName: 'Tara', lastName: 'Get', email, password } })).json;
    const ok = await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password }, headers: { 'user-agent': UA } });
    expect(ok.status).toBe(200);
    const guesses = Array.from({ length: 6 }, (_, i) => `Wrong-Guess-${i}-${Date.now()}`);
    secrets.push(password, ...guesses);
    for (const g of guesses) expect((await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password: g }, headers: { 'user-agent': UA } })).status).toBe(401);
    const trail = await eventually(async () => {
      const items = await entries(`targetId=${user.id}&pageSize=100`);
      return items.filter((e) => e.action === 'login.failed').length === 6 && items.some((e) => e.action === 'account.locked') ? items : undefined;
    }, 10_000, 100);
    const locked = trail.find((e) => e.action === 'account.locked')!;
    expect(locked).toMatchObject({ actor: { type: 'anonymous', id: null }, clientIp: '127.0.0.1', userAgent: UA, changes: [{ field: 'failures', after: 5 }] });
    const refusedWhileLocked = trail.filter((e) => e.action === 'login.failed').map((e) => e.changes.find((c) => c.field === 'reason')?.after);
    expect(refusedWhileLocked).toEqual(['locked', 'invalid_credentials', 'invalid_credentials', 'invalid_credentials', 'invalid_credentials', 'invalid_credentials']);
    expect(trail.find((e) => e.action === 'login.succeeded')).toMatchObject({ actor: { type: 'user', id: user.id, email } });
    const text = JSON.stringify(trail);
    for (const g of guesses) expect(text).not.toContain(g);
    expect(text).not.toContain(password);
  });

  it('a refresh token used twice: the reuse is recorded against its user', async () => {
    const email = uniqueEmail('reuse');
    const password = strongPassword();
    const user = (await call('POST', '/api/v1/users', { body: { firstName: 'Reu', lastName: 'Se', email, password } })).json;
    const first = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).json.refreshToken;
    secrets.push(password, first);
    const second = (await http(sys.url(), 'POST', '/api/v1/auth/refresh', { body: { refreshToken: first } })).json.refreshToken;
    expect((await http(sys.url(), 'POST', '/api/v1/auth/refresh', { body: { refreshToken: second } })).status).toBe(200);
    // A token presented after its successor was used is a theft signal: the whole family goes.
    expect((await http(sys.url(), 'POST', '/api/v1/auth/refresh', { body: { refreshToken: first } })).status).toBe(401);
    const reuse = await until(`targetId=${user.id}&action=refresh.`, (items) => items[0]);
    // The family: the three tokens of the chain.
    expect(reuse).toMatchObject({ action: 'refresh.reuse_detected', actor: { type: 'anonymous' }, changes: [{ field: 'revokedTokens', after: 3 }] });
    expect(JSON.stringify(reuse)).not.toContain(first);
  });

  it('filters and keyset pages over the API; bad filters and cursors are 400 problem+json', async () => {
    const first = await call('GET', '/api/v1/audit-events?pageSize=2');
    expect(first.json.items).toHaveLength(2);
    expect(typeof first.json.nextCursor).toBe('string');
    const second = await call('GET', `/api/v1/audit-events?pageSize=2&cursor=${first.json.nextCursor}`);
    expect(second.json.items[0].seq).toBeLessThan(first.json.items[1].seq);
    const byActor = await entries(`actorId=${adminId}&pageSize=100`);
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((e) => e.actor.id === adminId)).toBe(true);
    for (const bad of ['cursor=nope', 'pageSize=0', 'pageSize=101', 'from=yesterday', 'from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'unknown=1']) {
      const r = await call('GET', `/api/v1/audit-events?${bad}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
      expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(r.json.traceId).toEqual(expect.any(String));
    }
  });

  it('only audit.read holders (and Administrators) read the trail', async () => {
    const email = uniqueEmail('nobody');
    const password = strongPassword();
    await call('POST', '/api/v1/users', { body: { firstName: 'No', lastName: 'Body', email, password } });
    const token = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).json.token;
    expect((await http(sys.url(), 'GET', '/api/v1/audit-events', { token })).status).toBe(403);
    expect((await http(sys.url(), 'GET', '/api/v1/audit-events/verify', { token })).status).toBe(403);
    expect((await http(sys.url(), 'GET', '/api/v1/audit-events')).status).toBe(401);
  });

  it("verify holds the chain against its signed checkpoints: the database owner's cut of the tail (the Administrator grant with it, #20) is named", async () => {
    const verify = async () => (await call('GET', '/api/v1/audit-events/verify')).json;
    // The harness signs a moved head every 300 ms: soon every entry is covered.
    const signed = await eventually(async () => {
      const r = await verify();
      return r.checkpoint && r.unsignedEntries === 0 ? r : undefined;
    }, 10_000, 100);
    expect(signed).toMatchObject({ ok: true, checkpoint: { seq: signed.checked, hash: expect.stringMatching(/^[0-9a-f]{64}$/) }, keyId: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(Buffer.from(signed.publicKey, 'base64')).toHaveLength(32);
    const [grant] = await entries('action=user.roles.changed&pageSize=1');
    const n = grant!.seq;

    const ds = sys.audit.dataSource;
    const saved = await ds.query<Array<Record<string, unknown>>>('SELECT * FROM audit_entries WHERE seq >= $1 ORDER BY seq', [n]);
    const [head] = await ds.query<Array<{ last_seq: string; last_hash: string }>>('SELECT last_seq, last_hash FROM audit_chain');
    // The rewrite as #20 reported it, through what the owner still holds (retention's pass, in a table it owns).
    await ds.transaction(async (m) => {
      await m.query('SELECT last_seq FROM audit_chain WHERE id = 1 FOR UPDATE');
      await m.query('INSERT INTO audit_purge_grants (txid) VALUES (txid_current())');
      await m.query('DELETE FROM audit_entries WHERE seq >= $1', [n]);
      await m.query('UPDATE audit_chain SET last_seq = $1, last_hash = (SELECT hash FROM audit_entries WHERE seq = $1) WHERE id = 1', [n - 1]);
    });
    try {
      const cut = await verify();
      expect(cut).toMatchObject({ ok: false, brokenAtSeq: n, checkpoint: { seq: signed.checkpoint.seq } });
      expect(cut.reason).toMatch(new RegExp(`^entries after seq ${n - 1} are missing: the checkpoint at seq ${signed.checkpoint.seq} signed at \\S+ is past the chain's end$`));
    } finally {
      await ds.transaction(async (m) => {
        await m.query("SET LOCAL session_replication_role = 'replica'");
        for (const r of saved) {
          const cols = Object.keys(r);
          await m.query(`INSERT INTO audit_entries (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, cols.map((c) => (c === 'changes' ? JSON.stringify(r[c]) : r[c])));
        }
        await m.query('UPDATE audit_chain SET last_seq = $1, last_hash = $2 WHERE id = 1', [head!.last_seq, head!.last_hash]);
      });
    }
    expect(await verify()).toMatchObject({ ok: true });
  });

  it('verify: ok on the intact chain; an altered row is found, named by its seq', async () => {
    const ok = await call('GET', '/api/v1/audit-events/verify');
    expect(ok.json).toMatchObject({ ok: true, firstSeq: 1, brokenAtSeq: null });
    expect(ok.json.checked).toBeGreaterThan(3);
    const ds = sys.audit.dataSource;
    const tamper = (sql: string) =>
      ds.transaction(async (m) => {
        await m.query("SET LOCAL session_replication_role = 'replica'");
        await m.query(sql);
      });
    await tamper(`UPDATE audit_entries SET actor_id = NULL, actor_type = 'system', actor_email = NULL WHERE seq = 2`);
    const broken = await call('GET', '/api/v1/audit-events/verify');
    expect(broken.json).toMatchObject({ ok: false, brokenAtSeq: 2, reason: expect.stringMatching(/altered/) });
  });
});
