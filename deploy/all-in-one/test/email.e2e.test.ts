/**
 * Email actions end to end, through a real SMTP server in-process: password reset and email
 * verification by the emailed links, what must not leak (account existence, tokens), limits.
 */
import { type SmtpSink, actionToken, eventually, startSmtpSink, testSigner } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(60_000);

describe('email actions (end to end)', () => {
  let sys: TestSystem;
  let smtp: SmtpSink;
  let admin: string;
  const logLines: string[] = [];
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });
  const requestReset = (email: string) => call('POST', '/api/v1/auth/password-reset/request', { body: { email } });

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sys = await startTestSystem({
      logLines,
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: 'https://app.example', EMAIL_ACTION_MAX_PER_HOUR: '3' },
    });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
    await smtp?.close();
  });

  async function newUser() {
    const email = uniqueEmail('mail');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Grace', lastName: 'Hopper', email, password } });
    expect(r.status).toBe(201);
    return { id: r.json.id as string, email, password };
  }

  const tokenFor = async (email: string, action: 'reset-password' | 'verify-email', after = 0) => {
    const mail = await smtp.waitFor((m) => m.to.includes(email) && smtp.mails.indexOf(m) >= after && actionToken(m, action) !== undefined);
    return actionToken(mail, action)!;
  };

  it('reset: 202, mail with the link, confirm 204; old password fails, new works; token single use; sessions end; a notice follows', async () => {
    const u = await newUser();
    const session = (await login(u.email, u.password)).json;
    const r = await requestReset(u.email);
    expect(r.status).toBe(202);
    const token = await tokenFor(u.email, 'reset-password');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const next = strongPassword();
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token, newPassword: next } })).status).toBe(204);
    expect((await login(u.email, u.password)).status).toBe(401);
    expect((await login(u.email, next)).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token, newPassword: strongPassword() } })).status).toBe(400);
    expect((await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(401);
    await smtp.waitFor((m) => m.to.includes(u.email) && m.subject === 'Your password was changed');
  });

  it('202 with an identical body, and about the same time, for existing, unknown and deleted accounts', async () => {
    // Three of each kind, each asked three times (this suite's per-address budget): nine samples a kind.
    const live = [await newUser(), await newUser(), await newUser()];
    const gone = [await newUser(), await newUser(), await newUser()];
    for (const g of gone) expect((await call('DELETE', `/api/v1/users/${g.id}`, { token: admin })).status).toBe(204);
    const u = live[0]!;
    const timings: Record<string, number[]> = { existing: [], unknown: [], deleted: [] };
    const bodies = new Set<string>();
    // Interleaved in a shuffled order, so a burst of load on this shared machine falls on every kind.
    const asks = [0, 1, 2].flatMap(() => [0, 1, 2].flatMap((i) => [
      { k: 'existing' as const, email: live[i]!.email },
      { k: 'deleted' as const, email: gone[i]!.email },
      { k: 'unknown' as const, email: uniqueEmail('nobody') },
    ])).map((a) => ({ ...a, r: Math.random() }));
    asks.sort((a, b) => a.r - b.r);
    for (const { k, email } of asks) {
      const t = performance.now();
      const r = await requestReset(email);
      timings[k]!.push(performance.now() - t);
      expect(r.status).toBe(202);
      bodies.add(r.text);
    }
    expect(bodies.size).toBe(1);
    // The same work for every kind: the medians differ by no more than the noise of this run (three
    // median absolute deviations of the samples, at least 50 ms), not by a fixed wall-clock figure.
    const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
    const mad = (a: number[]) => median(a.map((x) => Math.abs(x - median(a))));
    const noise = Math.max(50, 3 * Math.max(...Object.values(timings).map(mad)));
    expect(Math.abs(median(timings.existing!) - median(timings.unknown!))).toBeLessThanOrEqual(noise);
    expect(Math.abs(median(timings.existing!) - median(timings.deleted!))).toBeLessThanOrEqual(noise);
    await tokenFor(u.email, 'reset-password');
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.mails.some((m) => gone.some((g) => m.to.includes(g.email)))).toBe(false);
  });

  it('a new request invalidates the earlier unused token', async () => {
    const u = await newUser();
    await requestReset(u.email);
    const first = await tokenFor(u.email, 'reset-password');
    const mark = smtp.mails.length;
    await requestReset(u.email);
    const second = await tokenFor(u.email, 'reset-password', mark);
    expect(second).not.toBe(first);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: first, newPassword: strongPassword() } })).status).toBe(400);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: second, newPassword: strongPassword() } })).status).toBe(204);
  });

  it('a weak new password → 400 with the token still usable; an expired token → 400', async () => {
    const u = await newUser();
    await requestReset(u.email);
    const token = await tokenFor(u.email, 'reset-password');
    const weak = await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token, newPassword: 'weak' } });
    expect(weak.status).toBe(400);
    expect(weak.json.errors).toEqual([{ field: 'body.newPassword', message: expect.any(String) }]);
    expect((await login(u.email, u.password)).status).toBe(200);
    await sys.identity.dataSource.query(`UPDATE email_action_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [u.id]);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token, newPassword: strongPassword() } })).status).toBe(400);
  });

  it('per-email limit: 429 with Retry-After after 3 requests, for an unknown address too', async () => {
    for (const email of [(await newUser()).email, uniqueEmail('nobody')]) {
      for (let i = 0; i < 3; i++) expect((await requestReset(email)).status).toBe(202);
      const limited = await requestReset(email);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('email verification: 401 without a token; 202; the link confirms; emailVerified true; reuse 400', async () => {
    expect((await call('POST', '/api/v1/auth/email-verification/request')).status).toBe(401);
    const u = await newUser();
    const { token: access } = (await login(u.email, u.password)).json;
    expect((await call('POST', '/api/v1/auth/email-verification/request', { token: access })).status).toBe(202);
    const token = await tokenFor(u.email, 'verify-email');
    expect((await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token } })).status).toBe(204);
    expect((await call('GET', `/api/v1/users?id=${u.id}`, { token: admin })).json.emailVerified).toBe(true);
    expect((await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token } })).status).toBe(400);
    expect((await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token: `bogus-${randomUUID()}` } })).status).toBe(400);
  });

  it('tokens exist in the clear only in the mail: hashed at rest, sealed in events, never logged or returned', async () => {
    const u = await newUser();
    const r = await requestReset(u.email);
    const token = await tokenFor(u.email, 'reset-password');
    expect(r.text).not.toContain(token);
    const rows = await sys.identity.dataSource.query<Array<Record<string, unknown>>>('SELECT * FROM email_action_tokens WHERE user_id = $1', [u.id]);
    expect(JSON.stringify(rows)).not.toContain(token);
    const outbox = await sys.identity.dataSource.query<Array<{ payload: Buffer }>>(`SELECT payload FROM outbox_events WHERE subject = 'identity.password_reset.requested'`);
    expect(outbox.length).toBeGreaterThan(0);
    for (const o of outbox) expect(o.payload.toString('latin1')).not.toContain(token);
    await eventually(() => logLines.length > 0);
    expect(logLines.join('\n')).not.toContain(token);
  });

  it('bad bodies → 400: missing email, wrong types, unknown fields', async () => {
    for (const body of [{}, { email: 42 }, { email: 'a@b.cd', extra: 1 }]) {
      expect((await call('POST', '/api/v1/auth/password-reset/request', { body })).status).toBe(400);
    }
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: 'x' } })).status).toBe(400);
    expect((await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token: 5 } })).status).toBe(400);
  });

  it('operators can read the delivery records over gRPC', async () => {
    const u = await newUser();
    await requestReset(u.email);
    await tokenFor(u.email, 'reset-password');
    const { notificationV1 } = await import('@iam/contracts');
    const { createGrpcClient } = await import('@iam/platform');
    const { testMetrics } = await import('@iam/platform/testing');
    const c = createGrpcClient(notificationV1.NotificationServiceService, { target: `127.0.0.1:${sys.notification.grpcPort}`, metrics: testMetrics(), assert: { signer: testSigner('gateway'), to: 'notification' } });
    const list = await eventually(async () => {
      const l = await c.call.listDeliveries({ page: 1, pageSize: 10, status: notificationV1.DeliveryStatus.DELIVERY_STATUS_SENT, recipient: u.email });
      return l.totalCount > 0 ? l : null;
    });
    expect(list.items[0]).toMatchObject({ recipient: u.email, kind: 'password_reset', attempts: 1, subject: 'identity.password_reset.requested' });
    expect((await c.call.getDelivery({ eventId: list.items[0]!.eventId })).status).toBe(notificationV1.DeliveryStatus.DELIVERY_STATUS_SENT);
    c.close();
  });
});
