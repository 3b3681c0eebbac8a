/**
 * Security issue #8, end to end through the running gateways (two replicas, real PostgreSQL and
 * NATS): no caller gains more than it holds (privilege boundaries, escalation, built-ins, the last
 * Administrator, consistency under concurrency), and the authentication core's races (atomic
 * lockout, new accounts start active, subject-level revocation, address-bound email actions, an
 * idempotent --create-admin). Each test fails on the code before the fix.
 */
import { createDirectoryUseCases, readDirectoryConfig } from '@iam/directory';
import { readConfig } from '@iam/platform';
import { type SmtpSink, actionToken, eventually, startSmtpSink } from '@iam/platform/testing';
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(90_000);

const BUILTINS = ['users.manage', 'roles.manage', 'permissions.manage', 'role-permissions.manage', 'products.manage', 'audit.read', 'clients.manage', 'webhooks.manage', 'organizations.manage', 'identity-providers.manage'];

describe('authorization integrity and auth-core races (end to end)', () => {
  let sys: TestSystem;
  let smtp: SmtpSink;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}, replica = 0) => http(sys.url(replica), method, path, opts);
  const login = (email: string, password: string, replica = 0) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } }, replica);
  const as = (token: string) => ({
    get: (path: string) => call('GET', path, { token }),
    post: (path: string, body: unknown) => call('POST', path, { token, body }),
    put: (path: string, body: unknown) => call('PUT', path, { token, body }),
    del: (path: string) => call('DELETE', path, { token }),
  });
  const expectProblem = (r: HttpResult, status: number) => {
    expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({ status, type: 'application/problem+json' });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  };

  let seq = 0;
  const uniq = (tag: string) => `${tag}-${Date.now().toString(36)}-${++seq}`;
  const permissionId = async (name: string) =>
    (await as(admin).get(`/api/v1/permissions?q=${encodeURIComponent(name)}&pageSize=100`)).json.items.find((p: { name: string }) => p.name === name).id as string;
  const roleByName = async (name: string) =>
    (await as(admin).get(`/api/v1/roles?q=${encodeURIComponent(name)}&pageSize=100`)).json.items.find((r: { name: string }) => r.name === name) as { id: string; permissions: string[] };

  /** A role granting exactly these permissions (made by the Administrator). */
  async function roleWith(permissions: string[]): Promise<{ id: string; name: string }> {
    const r = await as(admin).post('/api/v1/roles', { name: uniq('role'), description: 'test' });
    expect(r.status).toBe(201);
    for (const p of permissions) expect((await as(admin).post('/api/v1/role-permissions', { roleId: r.json.id, permissionId: await permissionId(p) })).status).toBe(201);
    return { id: r.json.id, name: r.json.name };
  }

  async function newUser(roles: string[] = []) {
    const email = uniqueEmail('authz');
    const password = strongPassword();
    const r = await as(admin).post('/api/v1/users', { firstName: 'Eve', lastName: 'Tester', email, password, roles });
    expect(r.status).toBe(201);
    return { id: r.json.id as string, email, password };
  }

  /** A user holding exactly these permissions, logged in. */
  async function operator(permissions: string[]) {
    const role = await roleWith(permissions);
    const u = await newUser([role.name]);
    const session = (await login(u.email, u.password)).json;
    expect(session.token).toBeDefined();
    return { ...u, role, token: session.token as string, refreshToken: session.refreshToken as string };
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sys = await startTestSystem({ gateways: 2, env: { AUTH_MAX_FAILED_ATTEMPTS: '5', SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: 'https://app.example' } });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
    await smtp?.close();
  });

  describe('1. Administrator is granted, removed and acted upon only by Administrators', () => {
    it('a users.manage holder gets 403 for every way of touching Administrator, and nothing changes', async () => {
      const op = await operator(['users.manage']);
      const boss = await newUser(['Administrator']);
      const plain = await newUser();
      const me = as(op.token);
      expectProblem(await me.post('/api/v1/users', { firstName: 'A', lastName: 'B', email: uniqueEmail('x'), password: strongPassword(), roles: ['Administrator'] }), 403);
      expectProblem(await me.put(`/api/v1/users/${plain.id}`, { roles: ['Administrator'] }), 403);
      expectProblem(await me.put(`/api/v1/users/${op.id}`, { roles: [op.role.name, 'Administrator'] }), 403);
      for (const body of [{ firstName: 'Owned' }, { password: strongPassword() }, { email: uniqueEmail('takeover') }, { roles: [] }]) {
        expectProblem(await me.put(`/api/v1/users/${boss.id}`, body), 403);
      }
      expectProblem(await me.del(`/api/v1/users/${boss.id}`), 403);
      const after = (await as(admin).get(`/api/v1/users?id=${boss.id}`)).json;
      expect(after).toMatchObject({ firstName: 'Eve', email: boss.email, roles: ['Administrator'], deletedAt: null });
      expect((await login(boss.email, boss.password)).status).toBe(200);
      expect((await as(admin).get(`/api/v1/users?id=${plain.id}`)).json.roles).toEqual([]);
    });

    it('an Administrator may grant and remove it', async () => {
      const u = await newUser();
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { roles: ['Administrator'] })).json.roles).toEqual(['Administrator']);
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { roles: [] })).json.roles).toEqual([]);
    });
  });

  describe('2. no escalation through grants', () => {
    it('a role-permissions.manage holder links only permissions it holds, and never to Administrator', async () => {
      const op = await operator(['role-permissions.manage']);
      const target = await roleWith([]);
      const me = as(op.token);
      for (const p of ['users.manage', 'roles.manage', 'permissions.manage']) {
        expectProblem(await me.post('/api/v1/role-permissions', { roleId: op.role.id, permissionId: await permissionId(p) }), 403);
        expectProblem(await me.post('/api/v1/role-permissions', { roleId: target.id, permissionId: await permissionId(p) }), 403);
      }
      const adminRole = await roleByName('Administrator');
      const custom = await as(admin).post('/api/v1/permissions', { name: uniq('perm'), description: 'x' });
      expectProblem(await me.post('/api/v1/role-permissions', { roleId: adminRole.id, permissionId: custom.json.id }), 403);
      expectProblem(await me.post('/api/v1/role-permissions', { roleId: adminRole.id, permissionId: await permissionId('role-permissions.manage') }), 403);
      // What it holds, it may grant; moving that link onto a permission it lacks is refused.
      const ok = await me.post('/api/v1/role-permissions', { roleId: target.id, permissionId: await permissionId('role-permissions.manage') });
      expect(ok.status).toBe(201);
      expectProblem(await me.put(`/api/v1/role-permissions/${ok.json.id}`, { permissionId: await permissionId('users.manage') }), 403);
      expect((await roleByName(target.name)).permissions).toEqual(['role-permissions.manage']);
      expect((await roleByName(op.role.name)).permissions).toEqual(['role-permissions.manage']);
    });

    it('a users.manage holder assigns only roles whose every permission it holds, and manages only users it covers', async () => {
      const op = await operator(['users.manage']);
      const stronger = await roleWith(['users.manage', 'roles.manage']);
      const equal = await roleWith(['users.manage']);
      const empty = await roleWith([]);
      const me = as(op.token);
      expectProblem(await me.put(`/api/v1/users/${op.id}`, { roles: [op.role.name, stronger.name] }), 403);
      expectProblem(await me.post('/api/v1/users', { firstName: 'A', lastName: 'B', email: uniqueEmail('x'), password: strongPassword(), roles: [stronger.name] }), 403);
      expect((await as(admin).get(`/api/v1/users?id=${op.id}`)).json.roles).toEqual([op.role.name]);
      const victim = await newUser([stronger.name]);
      expectProblem(await me.put(`/api/v1/users/${victim.id}`, { password: strongPassword() }), 403);
      expectProblem(await me.put(`/api/v1/users/${victim.id}`, { email: uniqueEmail('takeover') }), 403);
      expectProblem(await me.del(`/api/v1/users/${victim.id}`), 403);
      expect((await login(victim.email, victim.password)).status).toBe(200);
      const peer = await newUser();
      expect((await me.put(`/api/v1/users/${peer.id}`, { roles: [equal.name, empty.name] })).status).toBe(200);
      expect((await me.put(`/api/v1/users/${peer.id}`, { roles: [] })).status).toBe(200);
    });
  });

  describe('3. built-ins are protected; permission names are immutable', () => {
    it('the built-in permissions cannot be deleted or renamed, nor unlinked from Administrator (409)', async () => {
      const links = (await as(admin).get('/api/v1/role-permissions?q=Administrator&pageSize=100')).json.items.filter((l: { roleName: string }) => l.roleName === 'Administrator');
      for (const name of BUILTINS) {
        const id = await permissionId(name);
        expectProblem(await as(admin).del(`/api/v1/permissions/${id}`), 409);
        expectProblem(await as(admin).put(`/api/v1/permissions/${id}`, { name: `${name}.x` }), 409);
        const link = links.find((l: { permissionName: string }) => l.permissionName === name);
        expectProblem(await as(admin).del(`/api/v1/role-permissions/${link.id}`), 409);
        expectProblem(await as(admin).put(`/api/v1/role-permissions/${link.id}`, { roleId: (await roleWith([])).id }), 409);
      }
      expect((await roleByName('Administrator')).permissions).toEqual([...BUILTINS].sort());
      const adminRole = await roleByName('Administrator');
      expectProblem(await as(admin).del(`/api/v1/roles/${adminRole.id}`), 409);
      expectProblem(await as(admin).put(`/api/v1/roles/${adminRole.id}`, { name: 'Root' }), 409);
    });

    it('any permission keeps its name; the description may change', async () => {
      const p = (await as(admin).post('/api/v1/permissions', { name: uniq('reports.read'), description: 'before' })).json;
      const r = await as(admin).put(`/api/v1/permissions/${p.id}`, { name: 'users.manage2' });
      expectProblem(r, 409);
      expect(r.json.errors).toEqual([{ field: 'body.name', message: 'is immutable' }]);
      const d = await as(admin).put(`/api/v1/permissions/${p.id}`, { name: p.name, description: 'after' });
      expect(d.status).toBe(200);
      expect(d.json).toMatchObject({ name: p.name, description: 'after' });
    });
  });

  describe('5. consistency under concurrency', () => {
    it('no interleaving of link creation and role or permission deletion leaves a live link to a deleted record', async () => {
      for (let i = 0; i < 12; i++) {
        const role = await roleWith([]);
        const perm = (await as(admin).post('/api/v1/permissions', { name: uniq('race'), description: 'x' })).json;
        const victim = i % 2 === 0 ? `/api/v1/roles/${role.id}` : `/api/v1/permissions/${perm.id}`;
        const [link, del] = await Promise.all([as(admin).post('/api/v1/role-permissions', { roleId: role.id, permissionId: perm.id }), as(admin).del(victim)]);
        expect([201, 400]).toContain(link.status);
        expect(del.status).toBe(204);
      }
      const dangling = await sys.directory.dataSource.query(
        `SELECT rp.id FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id
          WHERE rp.revoked_at IS NULL AND (r.deleted_at IS NOT NULL OR p.deleted_at IS NOT NULL)`,
      );
      expect(dangling).toEqual([]);
    });
  });

  describe('6-7. lockout', () => {
    it('a burst of wrong guesses plus the right one, sent together, does not log in; at most the limit is evaluated', async () => {
      const u = await newUser();
      const wrong = Array.from({ length: 20 }, () => login(u.email, strongPassword()));
      const right = login(u.email, u.password);
      const results = await Promise.all([...wrong, right]);
      expect(results.map((r) => r.status)).toEqual(Array(21).fill(401));
      const [row] = await sys.identity.dataSource.query(
        `SELECT failed_count, locked_until > now() AS locked FROM login_failures WHERE email_hash = sha256(convert_to($1, 'UTF8'))`,
        [u.email],
      );
      expect(row).toEqual({ failed_count: 5, locked: true });
    });

    it('failed logins for an email with no account do not lock the account created later with it', async () => {
      const email = uniqueEmail('later');
      for (let i = 0; i < 7; i++) expect((await login(email, strongPassword())).status).toBe(401);
      const password = strongPassword();
      expect((await as(admin).post('/api/v1/users', { firstName: 'New', lastName: 'Comer', email, password })).status).toBe(201);
      expect((await login(email, password)).status).toBe(200);
    });

    it('unknown, wrong-password and locked answer alike: status, body and timing class', async () => {
      const u = await newUser();
      const strip = (r: HttpResult) => ({ status: r.status, type: r.headers.get('content-type'), title: r.json.title, detail: r.json.detail });
      const timed = async (fn: () => Promise<HttpResult>) => {
        const t = process.hrtime.bigint();
        const r = await fn();
        return { r, ms: Number(process.hrtime.bigint() - t) / 1e6 };
      };
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const wrong: number[] = [];
      const unknown: number[] = [];
      const locked: number[] = [];
      let shape: unknown;
      for (let i = 0; i < 5; i++) {
        const w = await timed(() => login(u.email, strongPassword()));
        const n = await timed(() => login(uniqueEmail('ghost'), strongPassword()));
        shape ??= strip(w.r);
        expect(strip(n.r)).toEqual(shape);
        wrong.push(w.ms);
        unknown.push(n.ms);
      }
      for (let i = 0; i < 5; i++) {
        const l = await timed(() => login(u.email, i === 0 ? u.password : strongPassword()));
        expect(strip(l.r)).toEqual(shape);
        locked.push(l.ms);
      }
      // A locked email still pays one password hash: it is not an order of magnitude faster.
      expect(median(locked)).toBeGreaterThan(median(wrong) / 4);
      expect(median(unknown)).toBeGreaterThan(median(wrong) / 4);
    });
  });

  describe('8. subject-level revocation', () => {
    /** A plain user's valid token gets 403 on /users (no permission); a refused one gets 401. */
    const probe = (token: string, replica: number) => call('GET', '/api/v1/users', { token }, replica);
    async function sessionOnBoth() {
      const u = await newUser();
      const { token, refreshToken } = (await login(u.email, u.password)).json;
      for (const replica of [0, 1]) expect((await probe(token, replica)).status).toBe(403);
      return { ...u, token, refreshToken };
    }
    /** The token is refused (401) at both gateway replicas within 1 s. */
    async function refusedEverywhereWithin1s(token: string) {
      await eventually(async () => (await Promise.all([0, 1].map((i) => probe(token, i)))).every((x) => x.status === 401), 1_000, 20);
    }

    it('changing the password ends the access tokens at every replica within 1 s; a new login works at once', async () => {
      const u = await sessionOnBoth();
      const next = strongPassword();
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { password: next })).status).toBe(200);
      await refusedEverywhereWithin1s(u.token);
      const fresh = (await login(u.email, next)).json.token;
      for (const replica of [0, 1]) expect((await probe(fresh, replica)).status).toBe(403);
    });

    it('changing the email ends them too', async () => {
      const u = await sessionOnBoth();
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { email: uniqueEmail('moved') })).status).toBe(200);
      await refusedEverywhereWithin1s(u.token);
    });

    it('deleting the user ends them too', async () => {
      const u = await sessionOnBoth();
      expect((await as(admin).del(`/api/v1/users/${u.id}`)).status).toBe(204);
      await refusedEverywhereWithin1s(u.token);
    });

    it('a role change does not (it takes effect in the next token, spec §3)', async () => {
      const u = await sessionOnBoth();
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { roles: [(await roleWith([])).name] })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1_000));
      for (const replica of [0, 1]) expect((await probe(u.token, replica)).status).toBe(403);
    });
  });

  describe('9. email-action tokens are bound to the address they were mailed to', () => {
    const mailedToken = async (email: string, action: 'reset-password' | 'verify-email') =>
      actionToken(await smtp.waitFor((m) => m.to.includes(email) && actionToken(m, action) !== undefined), action)!;

    it('an email change invalidates pending reset and verification tokens, even if the address changes back', async () => {
      const u = await newUser();
      const session = (await login(u.email, u.password)).json;
      expect((await call('POST', '/api/v1/auth/email-verification/request', { token: session.token })).status).toBe(202);
      const verify = await mailedToken(u.email, 'verify-email');
      expect((await call('POST', '/api/v1/auth/password-reset/request', { body: { email: u.email } })).status).toBe(202);
      const reset = await mailedToken(u.email, 'reset-password');

      const moved = uniqueEmail('moved');
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { email: moved })).status).toBe(200);
      // Refused at once (the address no longer matches), and invalidated for good.
      expectProblem(await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: reset, newPassword: strongPassword() } }), 400);
      expectProblem(await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token: verify } }), 400);
      expect((await login(moved, u.password)).status).toBe(200);
      expect((await as(admin).get(`/api/v1/users?id=${u.id}`)).json.emailVerified).toBe(false);
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { email: u.email })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
      expectProblem(await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: reset, newPassword: strongPassword() } }), 400);
      expectProblem(await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token: verify } }), 400);
      expect((await login(u.email, u.password)).status).toBe(200);
    });

    it('a verified address, once changed, is unverified until the new one is proven', async () => {
      const u = await newUser();
      const session = (await login(u.email, u.password)).json;
      expect((await call('POST', '/api/v1/auth/email-verification/request', { token: session.token })).status).toBe(202);
      expect((await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token: await mailedToken(u.email, 'verify-email') } })).status).toBe(204);
      expect((await as(admin).get(`/api/v1/users?id=${u.id}`)).json.emailVerified).toBe(true);
      const moved = uniqueEmail('moved');
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { email: moved })).json).toMatchObject({ email: moved, emailVerified: false });
      // The same address again is no change: it stays verified once proven.
      const fresh = (await login(moved, u.password)).json.token;
      expect((await call('POST', '/api/v1/auth/email-verification/request', { token: fresh })).status).toBe(202);
      expect((await call('POST', '/api/v1/auth/email-verification/confirm', { body: { token: await mailedToken(moved, 'verify-email') } })).status).toBe(204);
      expect((await as(admin).put(`/api/v1/users/${u.id}`, { email: moved })).json).toMatchObject({ email: moved, emailVerified: true });
    });
  });

  describe('10. --create-admin is idempotent in effect', () => {
    it('run again with the same password, it changes nothing and ends no session', async () => {
      const session = (await login(ADMIN.email, ADMIN.password)).json;
      const before = (await as(admin).get(`/api/v1/users?id=${session.user.id}`)).json;
      const uc = createDirectoryUseCases(sys.directory.dataSource, readConfig(sys.env, (e) => readDirectoryConfig(e, { databaseUrl: 'postgres://unused/db' })));
      const again = await uc.credentials.ensureAdministrator(ADMIN);
      expect(again.created).toBe(false);
      await new Promise((r) => setTimeout(r, 1_000));
      const after = (await as(admin).get(`/api/v1/users?id=${session.user.id}`)).json;
      expect(after.updatedAt).toBe(before.updatedAt);
      for (const replica of [0, 1]) expect((await call('GET', '/api/v1/users?pageSize=1', { token: session.token }, replica)).status).toBe(200);
      expect((await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(200);
    });
  });

  // Last: it leaves a single Administrator.
  describe('4. the last active Administrator', () => {
    it('cannot be deleted or demoted; of two Administrators removing each other at once, one wins', async () => {
      const all = (await as(admin).get('/api/v1/users?pageSize=100')).json.items.filter((u: { roles: string[] }) => u.roles.includes('Administrator'));
      const self = all.find((u: { email: string }) => u.email === ADMIN.email);
      for (const u of all) if (u.id !== self.id) expect((await as(admin).put(`/api/v1/users/${u.id}`, { roles: [] })).status).toBe(200);
      expectProblem(await as(admin).del(`/api/v1/users/${self.id}`), 409);
      expectProblem(await as(admin).put(`/api/v1/users/${self.id}`, { roles: [] }), 409);

      const other = await newUser(['Administrator']);
      const otherToken = (await login(other.email, other.password)).json.token;
      const results = await Promise.all([as(admin).del(`/api/v1/users/${other.id}`), as(otherToken).del(`/api/v1/users/${self.id}`)]);
      // The loser is refused as the last Administrator (409), or, when the winner's delete landed
      // first, as an actor who is no longer one (403: rights are read as they are now).
      const [won, lost] = results.map((r) => r.status).sort();
      expect(won).toBe(204);
      expect([403, 409]).toContain(lost);
      const [{ n }] = await sys.directory.dataSource.query(
        `SELECT count(*)::int AS n FROM users u JOIN user_roles ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
          WHERE r.name = 'Administrator' AND u.deleted_at IS NULL`,
      );
      expect(n).toBe(1);
    });
  });
});
