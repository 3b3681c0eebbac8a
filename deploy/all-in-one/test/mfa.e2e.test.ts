/**
 * Second factors and sessions end to end (DESIGN §5, issue #24): TOTP enrolment and login with
 * its code (±1 step, replay refused, wrong codes counting toward the lockout), the mfa token
 * (reused, expired, another user's), recovery codes (single use), MFA_REQUIRED_ROLES, the
 * reauthentication window, no enumeration, sessions ended at a second gateway within a second,
 * and the administrator's unlock and reset, with their audit records.
 */
import { eventually } from '@iam/platform/testing';
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { claimsOf, totp } from './support/factors';

jest.setTimeout(90_000);

/** An independent TOTP (RFC 6238, SHA-1, 6 digits, 30 s) for the test's authenticator app. */
const sidOf = (jwt: string) => String(claimsOf(jwt).sid);

describe('second factors and sessions (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}, replica = 0) => http(sys.url(replica), method, path, opts);
  const login = (email: string, password: string, headers?: Record<string, string>) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password }, headers });
  const mfa = (body: Record<string, unknown>) => call('POST', '/api/v1/auth/mfa', { body });

  async function newUser(extra: Record<string, unknown> = {}) {
    const email = uniqueEmail('mfa');
    const password = strongPassword();
    const res = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Lovelace', email, password, ...extra } });
    expect(res.status).toBe(201);
    return { id: res.json.id as string, email, password };
  }

  /** A user with TOTP active (activated with the previous step's code: the ±1 window). */
  async function enrolled() {
    const u = await newUser();
    const token = (await login(u.email, u.password)).json.token as string;
    const start = await call('POST', '/api/v1/me/mfa/totp', { token });
    expect(start.status).toBe(200);
    const secret = start.json.secret as string;
    expect(start.json.otpauthUri).toMatch(/^otpauth:\/\/totp\/.+\?secret=[A-Z2-7]+&issuer=/);
    return { ...u, token, secret };
  }

  beforeAll(async () => {
    sys = await startTestSystem({ gateways: 2, env: { AUTH_MAX_FAILED_ATTEMPTS: '5', MFA_REQUIRED_ROLES: 'Secured' } });
    const res = await login(ADMIN.email, ADMIN.password);
    expect(res.status).toBe(200);
    admin = res.json.token;
    expect((await call('POST', '/api/v1/roles', { token: admin, body: { name: 'Secured', description: 'must use a second factor' } })).status).toBe(201);
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('REST tokens carry amr and auth_time; a non-enrolled login is unchanged', async () => {
    const u = await newUser();
    const res = await login(u.email, u.password);
    expect(res.status).toBe(200);
    const c = claimsOf(res.json.token);
    expect(c.amr).toEqual(['pwd']);
    expect(Math.abs((c.auth_time as number) - Date.now() / 1000)).toBeLessThan(10);
    expect(typeof c.sid).toBe('string');
    expect((await call('GET', '/api/v1/me/mfa', { token: res.json.token })).json).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
  });

  it('TOTP: activated only by a right code; login then needs it (±1 step, each code once)', async () => {
    const u = await enrolled();
    // Not active before a right code: login needs no factor yet.
    expect((await login(u.email, u.password)).status).toBe(200);
    const wrong = await call('POST', '/api/v1/me/mfa/totp/activate', { token: u.token, body: { code: totp(u.secret, 5) } });
    expect(wrong.status).toBe(400);
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: u.token, body: { code: totp(u.secret, -1) } })).status).toBe(204);
    expect((await call('GET', '/api/v1/me/mfa', { token: u.token })).json).toEqual({ totp: true, passkeys: 0, recoveryCodesLeft: 0 });

    const first = await login(u.email, u.password);
    expect(first.status).toBe(401);
    expect(first.headers.get('content-type')).toContain('application/problem+json');
    expect(first.json).toMatchObject({ type: 'urn:iam:problem:mfa-required', status: 401, methods: ['totp'], expiresIn: 300 });
    expect(first.json.mfaToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The activation's step is used: its code is refused (replay), and so is a step two ahead.
    expect((await mfa({ mfaToken: first.json.mfaToken, code: totp(u.secret, -1) })).status).toBe(401);
    expect((await mfa({ mfaToken: first.json.mfaToken, code: totp(u.secret, 2) })).status).toBe(401);
    const ok = await mfa({ mfaToken: first.json.mfaToken, code: totp(u.secret, 0) });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ tokenType: 'Bearer', user: { id: u.id, email: u.email } });
    expect(claimsOf(ok.json.token).amr).toEqual(['pwd', 'otp', 'mfa']);
    // The mfa token is single use.
    expect((await mfa({ mfaToken: first.json.mfaToken, code: totp(u.secret, 1) })).status).toBe(401);

    // Replay of the same code on a new login is refused; the next step's code is accepted.
    const second = await login(u.email, u.password);
    expect((await mfa({ mfaToken: second.json.mfaToken, code: totp(u.secret, 0) })).status).toBe(401);
    expect((await mfa({ mfaToken: second.json.mfaToken, code: totp(u.secret, 1) })).status).toBe(200);
    // Body shape checks: exactly one factor.
    expect((await mfa({ mfaToken: second.json.mfaToken })).status).toBe(400);
    expect((await mfa({ mfaToken: second.json.mfaToken, code: '12345' })).status).toBe(400);
    expect((await mfa({ mfaToken: second.json.mfaToken, code: '123456', extra: 1 })).status).toBe(400);
  });

  it("an mfa token that is expired, or another user's, is refused", async () => {
    const a = await enrolled();
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: a.token, body: { code: totp(a.secret, -1) } })).status).toBe(204);
    const b = await enrolled();
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: b.token, body: { code: totp(b.secret, -1) } })).status).toBe(204);
    const la = await login(a.email, a.password);
    // B's right code against A's token: A's factor is checked, so it fails.
    expect((await mfa({ mfaToken: la.json.mfaToken, code: totp(b.secret, 0) })).status).toBe(401);
    await sys.identity.dataSource.query(`UPDATE mfa_challenges SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [a.id]);
    const expired = await mfa({ mfaToken: la.json.mfaToken, code: totp(a.secret, 0) });
    expect(expired.status).toBe(401);
    expect(expired.json.type).toBe('urn:iam:problem:unauthenticated');
    expect((await mfa({ mfaToken: 'x'.repeat(43), code: totp(a.secret, 0) })).status).toBe(401);
  });

  it('wrong codes count toward the lockout', async () => {
    const u = await enrolled();
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: u.token, body: { code: totp(u.secret, -1) } })).status).toBe(204);
    const l = await login(u.email, u.password);
    const bad = totp(u.secret, 0) === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await mfa({ mfaToken: l.json.mfaToken, code: bad })).status).toBe(401);
    // Locked: the right code and the right password are refused now.
    expect((await mfa({ mfaToken: l.json.mfaToken, code: totp(u.secret, 0) })).status).toBe(401);
    const locked = await login(u.email, u.password);
    expect(locked.status).toBe(401);
    expect(locked.json.type).toBe('urn:iam:problem:unauthenticated');
    const sec = await call('GET', `/api/v1/users/${u.id}/security`, { token: admin });
    expect(sec.status).toBe(200);
    expect(sec.json).toMatchObject({ locked: true, mfa: { totp: true } });
    expect(Date.parse(sec.json.lockedUntil)).toBeGreaterThan(Date.now());
    // The administrator unlocks: the password works again (and asks for the factor).
    expect((await call('POST', `/api/v1/users/${u.id}/unlock`, { token: admin })).status).toBe(204);
    expect((await call('GET', `/api/v1/users/${u.id}/security`, { token: admin })).json).toMatchObject({ locked: false, lockedUntil: null, failedAttempts: 0 });
    const again = await login(u.email, u.password);
    expect(again.json.type).toBe('urn:iam:problem:mfa-required');
    // ... and resets the factors, with a reason: the password alone signs in.
    expect((await call('POST', `/api/v1/users/${u.id}/mfa/reset`, { token: admin, body: {} })).status).toBe(400);
    expect((await call('POST', `/api/v1/users/${u.id}/mfa/reset`, { token: admin, body: { reason: 'lost phone, identity checked by video call' } })).status).toBe(204);
    expect((await login(u.email, u.password)).status).toBe(200);
    await eventually(async () => {
      const r = await call('GET', `/api/v1/audit-events?targetId=${u.id}&pageSize=100`, { token: admin });
      const actions = (r.json.items as Array<{ action: string }>).map((e) => e.action);
      return ['mfa.enrolled', 'mfa.failed', 'account.locked', 'account.unlocked', 'mfa.reset'].every((a) => actions.includes(a));
    }, 10_000);
    const trail = await call('GET', `/api/v1/audit-events?targetId=${u.id}&pageSize=100`, { token: admin });
    expect(trail.text).not.toContain(u.secret);
    const reset = (trail.json.items as Array<{ action: string; changes: unknown }>).find((e) => e.action === 'mfa.reset');
    expect(JSON.stringify(reset?.changes)).toContain('lost phone');
  });

  it('recovery codes: ten, shown once, each used once, a new set replaces the old', async () => {
    const u = await enrolled();
    // No factor to back up yet.
    expect((await call('POST', '/api/v1/me/mfa/recovery-codes', { token: u.token })).status).toBe(409);
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: u.token, body: { code: totp(u.secret, -1) } })).status).toBe(204);
    const made = await call('POST', '/api/v1/me/mfa/recovery-codes', { token: u.token });
    expect(made.status).toBe(200);
    const codes = made.json.codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const l1 = await login(u.email, u.password);
    expect(l1.json.methods).toEqual(['totp', 'recovery_code']);
    const used = await mfa({ mfaToken: l1.json.mfaToken, recoveryCode: codes[0]!.toLowerCase() });
    expect(used.status).toBe(200);
    const l2 = await login(u.email, u.password);
    expect((await mfa({ mfaToken: l2.json.mfaToken, recoveryCode: codes[0] })).status).toBe(401);
    expect((await call('GET', '/api/v1/me/mfa', { token: used.json.token })).json.recoveryCodesLeft).toBe(9);
    const fresh = await call('POST', '/api/v1/me/mfa/recovery-codes', { token: used.json.token });
    expect(fresh.status).toBe(200);
    expect((await mfa({ mfaToken: l2.json.mfaToken, recoveryCode: codes[1] })).status).toBe(401);
    expect((await mfa({ mfaToken: l2.json.mfaToken, recoveryCode: fresh.json.codes[0] })).status).toBe(200);
  });

  it('removing a factor or new codes needs a sign-in within 5 minutes', async () => {
    const u = await enrolled();
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: u.token, body: { code: totp(u.secret, -1) } })).status).toBe(204);
    const l = await login(u.email, u.password);
    const s = await mfa({ mfaToken: l.json.mfaToken, code: totp(u.secret, 0) });
    // The session signed in 6 minutes ago: a refreshed token keeps that auth_time.
    await sys.identity.dataSource.query(`UPDATE sessions SET auth_time = now() - interval '6 minutes' WHERE id = $1`, [claimsOf(s.json.token).sid]);
    const old = await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: s.json.refreshToken } });
    expect(old.status).toBe(200);
    expect(claimsOf(old.json.token).amr).toEqual(['pwd', 'otp', 'mfa']);
    for (const [method, path] of [
      ['DELETE', '/api/v1/me/mfa/totp'],
      ['POST', '/api/v1/me/mfa/recovery-codes'],
    ] as const) {
      const r = await call(method, path, { token: old.json.token });
      expect(r.status).toBe(403);
      expect(r.json.type).toBe('urn:iam:problem:reauthentication-required');
    }
    expect((await call('DELETE', '/api/v1/me/mfa/totp', { token: s.json.token })).status).toBe(204);
    expect((await call('GET', '/api/v1/me/mfa', { token: s.json.token })).json.totp).toBe(false);
  });

  it('MFA_REQUIRED_ROLES: a member gets no token before enrolling, then signs in with the new factor', async () => {
    const u = await newUser({ roles: ['Secured'] });
    const first = await login(u.email, u.password);
    expect(first.status).toBe(401);
    expect(first.json).toMatchObject({ type: 'urn:iam:problem:mfa-enrolment-required', methods: ['totp'] });
    expect(first.json.token).toBeUndefined();
    // Not a code before enrolment.
    expect((await mfa({ mfaToken: first.json.mfaToken, code: '123456' })).status).toBe(401);
    const en = await call('POST', '/api/v1/auth/mfa/enrol', { body: { mfaToken: first.json.mfaToken } });
    expect(en.status).toBe(200);
    const done = await mfa({ mfaToken: first.json.mfaToken, code: totp(en.json.secret, 0) });
    expect(done.status).toBe(200);
    expect(claimsOf(done.json.token).amr).toEqual(['pwd', 'otp', 'mfa']);
    const next = await login(u.email, u.password);
    expect(next.json.type).toBe('urn:iam:problem:mfa-required');
    // An mfa-required token does not enrol.
    expect((await call('POST', '/api/v1/auth/mfa/enrol', { body: { mfaToken: next.json.mfaToken } })).status).toBe(409);
  });

  it('MFA_REQUIRED_ROLES reaches a session already open: given the role after a password-only sign-in, its refresh is refused; a sign-in with the factor refreshes', async () => {
    const u = await newUser();
    const plain = await login(u.email, u.password);
    expect(plain.status).toBe(200);
    expect(claimsOf(plain.json.token).amr).toEqual(['pwd']);
    const withFactor = await enrolled();
    const en = await call('POST', '/api/v1/me/mfa/totp/activate', { token: withFactor.token, body: { code: totp(withFactor.secret, -1) } });
    expect(en.status).toBe(204);
    const strong = await login(withFactor.email, withFactor.password);
    const done = await mfa({ mfaToken: strong.json.mfaToken, code: totp(withFactor.secret, 0) });
    expect(done.status).toBe(200);
    for (const id of [u.id, withFactor.id]) {
      expect((await call('PUT', `/api/v1/users/${id}`, { token: admin, body: { roles: ['Secured'] } })).status).toBe(200);
    }
    // Identity reads roles through its principal cache, dropped by the directory's event.
    let refused: HttpResult | undefined;
    let refresh = plain.json.refreshToken as string;
    await eventually(async () => {
      const r = await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: refresh } });
      if (r.status === 200) refresh = r.json.refreshToken as string;
      refused = r;
      return r.status === 401;
    }, 10_000, 200);
    expect(refused!.json).toMatchObject({ status: 401, detail: expect.stringContaining('second factor') });
    // Its family is over: the next refresh of it is refused too. Its session ended as from the
    // sessions list: its access tokens are refused at the gateway.
    expect((await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: refresh } })).status).toBe(401);
    await eventually(async () => (await call('GET', '/api/v1/me', { token: plain.json.token as string })).status === 401, 5_000, 100);
    const ok = await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: done.json.refreshToken } });
    expect(ok.status).toBe(200);
    expect(claimsOf(ok.json.token).roles).toContain('Secured');
  });

  it('no enumeration: unknown email, wrong password and enrolled + wrong password answer alike', async () => {
    const plain = await newUser();
    const u = await enrolled();
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token: u.token, body: { code: totp(u.secret, -1) } })).status).toBe(204);
    const strip = (r: HttpResult) => ({
      status: r.status,
      type: r.headers.get('content-type'),
      keys: Object.keys(r.json).sort(),
      ptype: r.json.type,
      title: r.json.title,
      detail: r.json.detail,
    });
    const timed = async (fn: () => Promise<HttpResult>) => {
      const t = process.hrtime.bigint();
      const r = await fn();
      return { r, ms: Number(process.hrtime.bigint() - t) / 1e6 };
    };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const times: Record<string, number[]> = { unknown: [], wrong: [], enrolled: [] };
    let shape: unknown;
    for (let i = 0; i < 4; i++) {
      for (const [k, fn] of [
        ['unknown', () => login(uniqueEmail('ghost'), strongPassword())],
        ['wrong', () => login(plain.email, strongPassword())],
        ['enrolled', () => login(u.email, strongPassword())],
      ] as const) {
        const t = await timed(fn);
        shape ??= strip(t.r);
        expect(strip(t.r)).toEqual(shape);
        times[k]!.push(t.ms);
      }
    }
    const base = median(times.wrong!);
    for (const k of ['unknown', 'enrolled']) {
      expect(median(times[k]!)).toBeGreaterThan(base / 4);
      expect(median(times[k]!)).toBeLessThan(base * 4 + 50);
    }
  });

  it('sessions: listed with device and IP, ended one by one or all but this one, at a second gateway within 1 s', async () => {
    const u = await newUser();
    const chrome = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const a = await login(u.email, u.password, { 'user-agent': chrome });
    const b = await login(u.email, u.password, { 'user-agent': 'curl/8.5.0' });
    const c = await login(u.email, u.password);
    const list = await call('GET', '/api/v1/me/sessions', { token: a.json.token });
    expect(list.status).toBe(200);
    expect(list.json.items).toHaveLength(3);
    const mine = (list.json.items as Array<{ id: string; device: string; ip: string; current: boolean }>).find((s) => s.current)!;
    expect(mine).toMatchObject({ id: claimsOf(a.json.token).sid, device: 'Chrome 131 on Linux' });
    expect(mine.ip).toMatch(/127\.0\.0\.1/);
    expect(list.json.items.find((s: { id: string }) => s.id === claimsOf(b.json.token).sid).device).toBe('curl 8');

    // B's session ended from A: B's access tokens (the login's and a refreshed one, recorded by
    // the rotation's statement) stop at the other gateway within a second, its refresh token at once.
    const b2 = await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: b.json.refreshToken } });
    expect(b2.status).toBe(200);
    expect(claimsOf(b2.json.token)).toMatchObject({ sid: sidOf(b.json.token), amr: ['pwd'] });
    expect((await call('GET', '/api/v1/me/mfa', { token: b.json.token }, 1)).status).toBe(200);
    expect((await call('GET', '/api/v1/me/mfa', { token: b2.json.token }, 1)).status).toBe(200);
    const ended = Date.now();
    expect((await call('DELETE', `/api/v1/me/sessions/${sidOf(b.json.token)}`, { token: a.json.token })).status).toBe(204);
    await eventually(async () => (await call('GET', '/api/v1/me/mfa', { token: b.json.token }, 1)).status === 401, 1_000, 20);
    await eventually(async () => (await call('GET', '/api/v1/me/mfa', { token: b2.json.token }, 1)).status === 401, 1_000, 20);
    expect(Date.now() - ended).toBeLessThan(1_000);
    expect((await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: b2.json.refreshToken } })).status).toBe(401);
    expect((await call('DELETE', `/api/v1/me/sessions/${sidOf(b.json.token)}`, { token: a.json.token })).status).toBe(404);
    // Another user's session is not yours to end.
    const other = await newUser();
    const o = await login(other.email, other.password);
    expect((await call('DELETE', `/api/v1/me/sessions/${sidOf(o.json.token)}`, { token: a.json.token })).status).toBe(404);

    // Sign out everywhere else: C ends, A stays.
    expect((await call('DELETE', '/api/v1/me/sessions', { token: a.json.token })).status).toBe(204);
    await eventually(async () => (await call('GET', '/api/v1/me/mfa', { token: c.json.token }, 1)).status === 401, 1_000, 20);
    expect((await call('GET', '/api/v1/me/mfa', { token: a.json.token }, 1)).status).toBe(200);

    // The administrator: lists and ends every session of the user.
    const adm = await call('GET', `/api/v1/users/${u.id}/sessions`, { token: admin });
    expect(adm.status).toBe(200);
    expect(adm.json.items.map((s: { id: string }) => s.id)).toEqual([claimsOf(a.json.token).sid]);
    const plain = await login(other.email, other.password);
    expect((await call('GET', `/api/v1/users/${u.id}/sessions`, { token: plain.json.token })).status).toBe(403);
    expect((await call('DELETE', `/api/v1/users/${u.id}/sessions`, { token: admin })).status).toBe(204);
    await eventually(async () => (await call('GET', '/api/v1/me/mfa', { token: a.json.token }, 1)).status === 401, 1_000, 20);
    expect((await call('GET', `/api/v1/users/${u.id}/sessions`, { token: admin })).json.items).toEqual([]);
    expect((await call('GET', `/api/v1/users/00000000-0000-4000-8000-000000000000/sessions`, { token: admin })).status).toBe(404);
  });
});
