/**
 * Budgets of the anonymous requests that make the provider store a record (issue #34 items 5 and
 * 8), per client address, and of passkey registration options per signed-in user: a burst past
 * the limit answers 429 problem+json with Retry-After on each path, before the provider is
 * asked. Passkey options also keep only a user's newest challenges (one row per call).
 */
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(90_000);

/** Each budget: BURST requests per window of BURST / PER_MINUTE minutes (here three minutes: nothing refills during the test). */
const BURST = 4;
const LIMITS = {
  RATE_LIMIT_AUTHORIZE_PER_MINUTE: '1',
  RATE_LIMIT_AUTHORIZE_BURST: String(BURST),
  RATE_LIMIT_PAR_PER_MINUTE: '1',
  RATE_LIMIT_PAR_BURST: String(BURST),
  RATE_LIMIT_DEVICE_PER_MINUTE: '1',
  RATE_LIMIT_DEVICE_BURST: String(BURST),
  RATE_LIMIT_PASSKEY_OPTIONS_PER_MINUTE: '1',
  RATE_LIMIT_PASSKEY_OPTIONS_BURST: '7',
};

describe('rate limits of the provider\'s anonymous routes and of passkey options', () => {
  let sys: TestSystem;
  let base: string;

  beforeAll(async () => {
    sys = await startTestSystem({ env: LIMITS });
    base = sys.url();
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const expectLimited = async (r: Response, what: string) => {
    expect({ what, status: r.status, type: r.headers.get('content-type') }).toEqual({ what, status: 429, type: expect.stringMatching(/^application\/problem\+json/) as string });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  };

  it('/oidc/auth (GET and POST, and its resumes) share one budget per address', async () => {
    const calls = [
      () => fetch(`${base}/oidc/auth?client_id=nobody&response_type=code`, { redirect: 'manual' }),
      () => fetch(`${base}/oidc/auth`, { method: 'POST', headers: form, body: 'client_id=nobody', redirect: 'manual' }),
      () => fetch(`${base}/oidc/auth/made-up-uid`, { redirect: 'manual' }),
    ];
    for (let i = 0; i < BURST; i++) expect((await calls[i % calls.length]!()).status).not.toBe(429);
    for (const call of calls) await expectLimited(await call(), 'authorize');
  });

  it('/oidc/par has its own budget', async () => {
    const par = () => fetch(`${base}/oidc/par`, { method: 'POST', headers: form, body: 'client_id=nobody' });
    for (let i = 0; i < BURST; i++) expect((await par()).status).not.toBe(429);
    await expectLimited(await par(), 'par');
  });

  it('/oidc/device/auth and the device pages (/oidc/device GET and POST, /oidc/device/<uid>) share one budget per address', async () => {
    const calls = [
      () => fetch(`${base}/oidc/device/auth`, { method: 'POST', headers: form, body: 'client_id=nobody' }),
      () => fetch(`${base}/oidc/device`),
      () => fetch(`${base}/oidc/device`, { method: 'POST', headers: form, body: 'user_code=BCDF-GHJK&xsrf=x' }),
      () => fetch(`${base}/oidc/device/made-up-uid`),
    ];
    for (let i = 0; i < BURST; i++) expect((await calls[i % calls.length]!()).status).not.toBe(429);
    for (const call of calls) await expectLimited(await call(), 'device');
  });

  it("passkey options: a budget per signed-in user (another user's stands), and only the user's newest 5 challenges are kept", async () => {
    const admin = (await http(base, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const person = async () => {
      const email = uniqueEmail('pk-limit');
      const password = strongPassword();
      const created = await http(base, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'Pass', lastName: 'Key', email, password } });
      expect(created.status).toBe(201);
      const token = (await http(base, 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).json.token as string;
      return { id: created.json.id as string, token };
    };
    const [a, b] = [await person(), await person()];
    const options = (token: string) => fetch(`${base}/api/v1/me/passkeys/options`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 7; i++) expect((await options(a.token)).status).toBe(200);
    await expectLimited(await options(a.token), 'passkey options');
    expect((await options(b.token)).status).toBe(200);
    const [{ n }] = await sys.identity.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM webauthn_challenges WHERE user_id = $1 AND purpose = 'register'`, [a.id]);
    expect(n).toBe(5);
  });
});
