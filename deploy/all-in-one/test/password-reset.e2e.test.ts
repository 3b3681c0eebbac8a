/**
 * The reset confirm is one transaction (issue #14): the password change, the token's consumption,
 * the end of every session and the `identity.password.changed` notice happen together, once —
 * also when identity dies between the directory's commit and its own part (the directory's event
 * completes it), and a retried directory call changes nothing twice.
 */
import { directoryV1 } from '@iam/contracts';
import { createGrpcClient, sha256 } from '@iam/platform';
import { type SmtpSink, actionToken, eventually, startSmtpSink, testMetrics, testSigner } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(60_000);

describe('password reset confirm: all or nothing, once', () => {
  let sys: TestSystem;
  let smtp: SmtpSink;
  let admin: string;
  let credentials: ReturnType<typeof createGrpcClient<typeof directoryV1.CredentialServiceService>>;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sys = await startTestSystem({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: 'https://app.example' } });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token;
    // As identity calls it (the credential service answers identity alone).
    credentials = createGrpcClient(directoryV1.CredentialServiceService, { target: `127.0.0.1:${sys.directory.grpcPort}`, metrics: testMetrics(), assert: { signer: testSigner('identity'), to: 'directory' } });
  });

  afterAll(async () => {
    credentials?.close();
    await sys?.stop();
    await smtp?.close();
  });

  async function userWithSession() {
    const email = uniqueEmail('reset');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'L', email, password } });
    expect(r.status).toBe(201);
    const session = (await login(email, password)).json;
    expect(session.refreshToken).toEqual(expect.any(String));
    const mark = smtp.mails.length;
    expect((await call('POST', '/api/v1/auth/password-reset/request', { body: { email } })).status).toBe(202);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && smtp.mails.indexOf(m) >= mark && actionToken(m, 'reset-password') !== undefined);
    return { id: r.json.id as string, email, password, session, token: actionToken(mail, 'reset-password')! };
  }

  const identityEvents = async (userId: string, subject: string) =>
    (await sys.identity.dataSource.query<Array<{ payload: Buffer }>>('SELECT payload FROM outbox_events WHERE subject = $1', [subject])).filter((e) =>
      e.payload.toString('latin1').includes(userId),
    ).length;
  /** The directory's event reached identity (its outbox row is published) and had time to be handled. */
  const directoryEventHandled = async (userId: string) => {
    await eventually(async () => {
      const rows = await sys.directory.dataSource.query<Array<{ payload: Buffer; published_at: Date | null }>>(
        `SELECT payload, published_at FROM outbox_events WHERE subject = 'directory.user.updated'`,
      );
      const mine = rows.filter((r) => r.payload.toString('latin1').includes(userId));
      return mine.length > 0 && mine.every((r) => r.published_at !== null);
    }, 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
  };

  it('confirm → 204; password, token, sessions and notice changed together; sessions end once (one subject.revoked), one notice', async () => {
    const u = await userWithSession();
    const next = strongPassword();
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: u.token, newPassword: next } })).status).toBe(204);
    // Done by the time of the 204: nothing waits for the event.
    expect((await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: u.session.refreshToken } })).status).toBe(401);
    expect((await login(u.email, u.password)).status).toBe(401);
    expect((await login(u.email, next)).status).toBe(200);
    const [token] = await sys.identity.dataSource.query<Array<{ used_at: Date | null }>>('SELECT used_at FROM email_action_tokens WHERE user_id = $1', [u.id]);
    expect(token!.used_at).not.toBeNull();
    await directoryEventHandled(u.id);
    expect(await identityEvents(u.id, 'identity.subject.revoked')).toBe(1);
    expect(await identityEvents(u.id, 'identity.password.changed')).toBe(1);
    await smtp.waitFor((m) => m.to.includes(u.email) && m.subject === 'Your password was changed');
    expect(smtp.mails.filter((m) => m.to.includes(u.email) && m.subject === 'Your password was changed')).toHaveLength(1);
  });

  it('identity dies after the directory committed: the directory event completes the reset (token used, sessions ended, notice), once', async () => {
    const u = await userWithSession();
    const [pending] = await sys.identity.dataSource.query<Array<{ id: string }>>('SELECT id FROM email_action_tokens WHERE user_id = $1 AND used_at IS NULL', [u.id]);
    const next = strongPassword();
    // Exactly identity's call; identity "dies" before its own part.
    await credentials.call.resetPassword({ userId: u.id, password: next, emailSha256: sha256(u.email), resetId: pending!.id, attemptId: randomUUID() });
    await eventually(async () => (await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: u.session.refreshToken } })).status === 401, 10_000, 100);
    await eventually(async () => (await identityEvents(u.id, 'identity.password.changed')) === 1, 10_000, 100);
    expect((await login(u.email, next)).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: u.token, newPassword: strongPassword() } })).status).toBe(400);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await identityEvents(u.id, 'identity.subject.revoked')).toBe(1);
    expect(await identityEvents(u.id, 'identity.password.changed')).toBe(1);
  });

  it('the directory call retried with the same attempt answers the same and changes nothing twice; another attempt on a used reset → NOT_FOUND', async () => {
    const u = await userWithSession();
    const [pending] = await sys.identity.dataSource.query<Array<{ id: string }>>('SELECT id FROM email_action_tokens WHERE user_id = $1 AND used_at IS NULL', [u.id]);
    const req = { userId: u.id, password: strongPassword(), emailSha256: sha256(u.email), resetId: pending!.id, attemptId: randomUUID() };
    const first = await credentials.call.resetPassword(req);
    const again = await credentials.call.resetPassword({ ...req, password: strongPassword() });
    expect(again.changedAt).toEqual(first.changedAt);
    expect((await login(u.email, req.password)).status).toBe(200);
    await expect(credentials.call.resetPassword({ ...req, attemptId: randomUUID() })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const rows = await sys.directory.dataSource.query<Array<{ payload: Buffer }>>(`SELECT payload FROM outbox_events WHERE subject = 'directory.user.updated'`);
    expect(rows.filter((r) => r.payload.toString('latin1').includes(u.id))).toHaveLength(1);
  });

  it('a weak password or a changed address changes nothing: old password and sessions still work, no event', async () => {
    const u = await userWithSession();
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: u.token, newPassword: 'weak' } })).status).toBe(400);
    const moved = uniqueEmail('moved');
    expect((await call('PUT', `/api/v1/users/${u.id}`, { token: admin, body: { email: moved } })).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: u.token, newPassword: strongPassword() } })).status).toBe(400);
    expect((await login(moved, u.password)).status).toBe(200);
    expect(await identityEvents(u.id, 'identity.password.changed')).toBe(0);
    expect(await sys.directory.dataSource.query('SELECT 1 FROM password_resets WHERE user_id = $1', [u.id])).toHaveLength(0);
  });
});
