/**
 * The account page's API end to end (DESIGN §5 "Hosted pages"): the caller's own record, names,
 * password and email. Negative cases beside each: no mass assignment (roles, the verified flag,
 * another id), the current password asked again (a wrong one is a field error that counts toward
 * the lockout), the policy on the new password, a taken address; every change audited with the
 * person as actor and before → after (secrets only as changed); a password or email change ends
 * the account's sessions.
 */
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

/**
 * The next whole second. A subject revocation refuses every token whose `iat` (whole seconds) is
 * not after the revocation's second, so a sign-in in the same second as the change that revoked
 * gets a token refused at once (the conservative rule of issue #35, open as a known bug): the
 * tests sign in again only once that second is over.
 */
const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 5));

jest.setTimeout(90_000);

interface Entry {
  action: string;
  actor: { type: string; id: string | null };
  changes: Array<{ field: string; before?: unknown; after?: unknown; redacted?: boolean }>;
}

describe('the account API (/api/v1/me)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });

  async function person() {
    const email = uniqueEmail('me');
    const password = strongPassword();
    const res = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Lovelace', email, password } });
    expect(res.status).toBe(201);
    const token = (await login(email, password)).json.token as string;
    return { id: res.json.id as string, email, password, token };
  }

  beforeAll(async () => {
    sys = await startTestSystem({ env: { AUTH_MAX_FAILED_ATTEMPTS: '3' } });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('GET /api/v1/me: the caller\'s own record, with no permission needed; 401 without a token', async () => {
    const p = await person();
    const me = await call('GET', '/api/v1/me', { token: p.token });
    expect(me.status).toBe(200);
    expect(me.json).toEqual({ id: p.id, firstName: 'Ada', lastName: 'Lovelace', email: p.email, emailVerified: false, roles: [] });
    expect((await call('GET', '/api/v1/me')).status).toBe(401);
  });

  it('PUT /api/v1/me changes names only: roles, flags and ids are refused (400), and the change is audited with the person as actor', async () => {
    const p = await person();
    for (const body of [{ roles: ['Administrator'] }, { emailVerified: true }, { id: '00000000-0000-4000-8000-000000000000' }, { email: 'x@example.com' }, {}]) {
      const res = await call('PUT', '/api/v1/me', { token: p.token, body });
      expect({ body, status: res.status, type: res.headers.get('content-type') }).toEqual({ body, status: 400, type: expect.stringContaining('application/problem+json') as string });
    }
    const res = await call('PUT', '/api/v1/me', { token: p.token, body: { lastName: 'King' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ firstName: 'Ada', lastName: 'King', roles: [] });
    const entry = await eventually(async () => {
      const items = (await call('GET', `/api/v1/audit-events?targetId=${p.id}&pageSize=100`, { token: admin })).json.items as Entry[];
      return items.find((e) => e.action === 'user.updated');
    }, 10_000, 100);
    expect(entry).toMatchObject({ actor: { type: 'user', id: p.id }, changes: [{ field: 'lastName', before: 'Lovelace', after: 'King' }] });
  });

  it('POST /api/v1/me/password: the current password asked again (a wrong one: 400 on currentPassword, counted toward the lockout), the policy on the new one; then every session ends', async () => {
    const p = await person();
    const next = strongPassword();
    const wrong = await call('POST', '/api/v1/me/password', { token: p.token, body: { currentPassword: 'Not-The-Passw0rd!', newPassword: next } });
    expect(wrong.status).toBe(400);
    expect(wrong.json.errors).toEqual([{ field: 'body.currentPassword', message: 'is not correct' }]);
    const weak = await call('POST', '/api/v1/me/password', { token: p.token, body: { currentPassword: p.password, newPassword: 'short' } });
    expect(weak.status).toBe(400);
    expect((weak.json.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(['body.newPassword']);
    expect((await login(p.email, p.password)).status).toBe(200);
    const ok = await call('POST', '/api/v1/me/password', { token: p.token, body: { currentPassword: p.password, newPassword: next } });
    expect(ok.status).toBe(204);
    expect((await login(p.email, p.password)).status).toBe(401);
    expect((await login(p.email, next)).status).toBe(200);
    // The change ended the sessions: the token it was made with stops working.
    await eventually(async () => (await call('GET', '/api/v1/me', { token: p.token })).status === 401, 5_000, 100);
    const items = (await call('GET', `/api/v1/audit-events?targetId=${p.id}&pageSize=100`, { token: admin })).json.items as Entry[];
    const changed = items.find((e) => e.action === 'user.updated' && e.changes.some((c) => c.field === 'password'));
    expect(changed).toMatchObject({ actor: { type: 'user', id: p.id } });
    expect(JSON.stringify(items)).not.toContain(next);
  });

  it('wrong current passwords lock the account like failed logins', async () => {
    const p = await person();
    for (let i = 0; i < 3; i++) {
      expect((await call('POST', '/api/v1/me/email', { token: p.token, body: { email: uniqueEmail('x'), currentPassword: 'Not-The-Passw0rd!' } })).status).toBe(400);
    }
    // Locked: the right password is refused too, at login and here.
    expect((await login(p.email, p.password)).status).toBe(401);
    expect((await call('POST', '/api/v1/me/password', { token: p.token, body: { currentPassword: p.password, newPassword: strongPassword() } })).status).toBe(400);
  });

  it('POST /api/v1/me/email: the new address at once, unverified, the old one and the session gone; a taken address is 409 (the mail to the new address: console/test/mailbox.e2e.test.ts)', async () => {
    const p = await person();
    const other = await person();
    const taken = await call('POST', '/api/v1/me/email', { token: p.token, body: { email: other.email, currentPassword: p.password } });
    expect(taken.status).toBe(409);
    const email = uniqueEmail('new');
    const res = await call('POST', '/api/v1/me/email', { token: p.token, body: { email: email.toUpperCase(), currentPassword: p.password } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ email, emailVerified: false });
    expect((await login(p.email, p.password)).status).toBe(401);
    await nextSecond();
    const again = await login(email, p.password);
    expect(again.status).toBe(200);
    await eventually(async () => (await call('GET', '/api/v1/me', { token: p.token })).status === 401, 5_000, 100);
    expect((await call('GET', '/api/v1/me', { token: again.json.token })).json).toMatchObject({ email, emailVerified: false });
  });

  it('POST /api/v1/me/email: a verification mail that cannot be asked for (the address\'s hourly budget spent) leaves the change made and says so, 200 (not an error after the commit)', async () => {
    const p = await person();
    const x = uniqueEmail('budget');
    const y = uniqueEmail('between');
    const change = async (token: string, email: string) => call('POST', '/api/v1/me/email', { token, body: { email, currentPassword: p.password } });
    expect((await change(p.token, x)).status).toBe(200);
    await nextSecond();
    let token = (await login(x, p.password)).json.token as string;
    // The address's budget of verification mails (5 an hour): the change's one, and four more.
    for (let i = 0; i < 4; i++) expect((await call('POST', '/api/v1/auth/email-verification/request', { token })).status).toBe(202);
    expect((await change(token, y)).status).toBe(200);
    await nextSecond();
    token = (await login(y, p.password)).json.token as string;
    // Back to x: its budget is spent, the change is made all the same.
    const back = await change(token, x);
    expect(back.status).toBe(200);
    expect(back.json).toMatchObject({ email: x, emailVerified: false, message: expect.stringContaining('could not be sent') });
    expect((await login(x, p.password)).status).toBe(200);
  });

  it('POST /api/v1/me/sign-out-everywhere: every session of the account ends, the calling one included', async () => {
    const p = await person();
    const elsewhere = (await login(p.email, p.password)).json.token as string;
    expect((await call('GET', '/api/v1/me/sessions', { token: p.token })).json.items).toHaveLength(2);
    expect((await call('POST', '/api/v1/me/sign-out-everywhere', { token: p.token })).status).toBe(204);
    await eventually(async () => (await call('GET', '/api/v1/me', { token: p.token })).status === 401 && (await call('GET', '/api/v1/me', { token: elsewhere })).status === 401, 5_000, 100);
    const again = (await login(p.email, p.password)).json.token as string;
    expect((await call('GET', '/api/v1/me/sessions', { token: again })).json.items).toHaveLength(1);
    expect((await call('POST', '/api/v1/me/sign-out-everywhere')).status).toBe(401);
  });
});
