/**
 * Issue #35, item 6: a NUL (or another control character) in an identifier the provider reads
 * from a request (client_id, code, refresh_token, token, request_uri, user_code, id_token_hint,
 * the interaction's uid in the path, a stored parameter such as state) was a 500 at /oidc/auth,
 * /token, /par, /device/auth, introspection and end-session: PostgreSQL refused the byte in the
 * lookup. Each is a 4xx OAuth error (JSON) or error page, never a 5xx, and nothing is logged at
 * error level, as at the REST edge (control-characters.e2e.test.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';

jest.setTimeout(120_000);

const BAD: Array<[string, string]> = [
  ['NUL', '\u0000'],
  ['BEL', '\u0007'],
  ['escape', '\u001b'],
];
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('control characters in the provider\'s identifiers → 4xx, never 500', () => {
  let sys: TestSystem;
  const lines: string[] = [];
  let base: string;
  let redirect: string;
  let confidential: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    // The issuer (the console's redirect URI lives under it); the gateway itself listens on a port of its own.
    sys = await startTestSystem({ logLines: lines, env: { PUBLIC_URL: 'http://localhost:8080' } });
    base = sys.url();
    redirect = 'http://localhost:8080/console/';
    const admin = (await http(base, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    const r = await http(base, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `RP ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: ['http://127.0.0.1:21999/cb'], postLogoutRedirectUris: [], grantTypes: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'], roles: [] },
    });
    expect(r.status).toBe(201);
    confidential = { clientId: r.json.clientId, clientSecret: r.json.clientSecret };
  });

  afterAll(async () => {
    await sys?.stop();
  });

  beforeEach(() => {
    lines.length = 0;
  });

  interface Answer {
    what: string;
    status: number;
    type: string;
    /** Where a redirect goes (an authorization error goes back to the client: RFC 6749 §4.1.2.1). */
    location: string;
    body: string;
  }

  async function call(what: string, path: string, init: RequestInit = {}): Promise<Answer> {
    const res = await fetch(base + path, { redirect: 'manual', ...init });
    const a = { what, status: res.status, type: res.headers.get('content-type') ?? '', location: res.headers.get('location') ?? '', body: await res.text() };
    if (process.env.DEBUG_CTL) process.stdout.write(`${JSON.stringify(a).slice(0, 600)}\n`);
    return a;
  }

  const basic = () => `Basic ${Buffer.from(`${encodeURIComponent(confidential.clientId)}:${encodeURIComponent(confidential.clientSecret)}`).toString('base64')}`;
  const form = (p: Record<string, string>) => new URLSearchParams(p).toString();
  const authQuery = (p: Record<string, string>) =>
    `/oidc/auth?${form({
      client_id: 'iam-console',
      response_type: 'code',
      redirect_uri: redirect,
      scope: 'openid',
      state: 's',
      code_challenge: randomBytes(32).toString('base64url'),
      code_challenge_method: 'S256',
      ...p,
    })}`;

  /**
   * A pushed request whose state holds the character (the library keeps it encoded: 201), then
   * the authorization request naming it: refused (a page, or the error sent back to the client).
   */
  async function parThenAuthorize(c: string): Promise<Answer> {
    const pushed = await call('par', '/oidc/par', {
      method: 'POST',
      headers: { ...FORM, authorization: basic() },
      body: form({ client_id: confidential.clientId, response_type: 'code', redirect_uri: 'http://127.0.0.1:21999/cb', scope: 'openid', state: `s${c}`, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }),
    });
    expect(pushed.status).toBe(201);
    const requestUri = JSON.parse(pushed.body).request_uri as string;
    return call('auth (pushed state)', `/oidc/auth?${form({ client_id: confidential.clientId, request_uri: requestUri })}`, { headers: { accept: BROWSER } });
  }

  /** The device page's form posted with a user code (its xsrf token and cookie from the page). */
  async function postUserCode(userCode: string): Promise<Answer> {
    const page = await fetch(`${base}/oidc/device`, { headers: { accept: BROWSER } });
    const html = await page.text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
    expect(xsrf).toBeDefined();
    const cookie = page.headers.getSetCookie().map((v) => v.split(';')[0]).join('; ');
    return call('device (posted user_code)', '/oidc/device', { method: 'POST', headers: { ...FORM, accept: BROWSER, cookie }, body: form({ xsrf: xsrf!, user_code: userCode }) });
  }

  /**
   * A 4xx: an OAuth error body (JSON) or a page; never a 5xx. Introspection and revocation answer
   * an unknown token 200 (`active: false`; RFC 7009 §2.2), as for any token they do not know.
   */
  function expectRefused(a: Answer): void {
    if (a.status === 200 && a.what.startsWith('introspection')) return void expect(JSON.parse(a.body)).toEqual({ active: false });
    if (a.status === 200 && a.what.startsWith('revocation')) return;
    // The library's own answer for a pushed request (it keeps the parameters encoded), and its
    // device page shown again for a code it does not know.
    if (a.status === 201 && a.what.startsWith('par')) return;
    if (a.status === 200 && a.what === 'device (posted user_code)') return void expect(a.body).toContain('The code is not valid');
    // An authorization error sent back to the client (RFC 6749 §4.1.2.1).
    if (a.status === 303 && a.what.startsWith('auth')) return void expect(new URL(a.location).searchParams.get('error')).toMatch(/^invalid_/);
    expect({ what: a.what, status: a.status, refused: a.status >= 400 && a.status < 500 }).toEqual({ what: a.what, status: a.status, refused: true });
    if (a.type.startsWith('application/json')) expect({ what: a.what, error: typeof JSON.parse(a.body).error }).toEqual({ what: a.what, error: 'string' });
    else expect({ what: a.what, type: a.type }).toEqual({ what: a.what, type: expect.stringMatching(/^text\/html/) });
    expect(a.body).not.toMatch(/server_error|invalid byte sequence|unsupported Unicode|at .*\.js/);
  }

  const errorLines = () => lines.filter((l) => /"level":50/.test(l)).map((l) => l.slice(0, 400));

  it.each(BAD)('%s in client_id at /oidc/auth, /token, /par, /device/auth, introspection, revocation and end-session', async (_name, c) => {
    const id = `iam-console${c}`;
    const answers = [
      await call('auth', authQuery({ client_id: id }), { headers: { accept: BROWSER } }),
      await call('auth (JSON)', authQuery({ client_id: id })),
      await call('token', '/oidc/token', { method: 'POST', headers: FORM, body: form({ client_id: id, grant_type: 'refresh_token', refresh_token: 'x' }) }),
      await call('token (basic)', '/oidc/token', { method: 'POST', headers: { ...FORM, authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:x`).toString('base64')}` }, body: form({ grant_type: 'client_credentials' }) }),
      await call('par', '/oidc/par', { method: 'POST', headers: FORM, body: form({ client_id: id, response_type: 'code', redirect_uri: redirect, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }) }),
      await call('device/auth', '/oidc/device/auth', { method: 'POST', headers: FORM, body: form({ client_id: id, scope: 'openid' }) }),
      await call('introspection', '/oidc/token/introspection', { method: 'POST', headers: FORM, body: form({ client_id: id, client_secret: 'x', token: 'x' }) }),
      await call('revocation', '/oidc/token/revocation', { method: 'POST', headers: FORM, body: form({ client_id: id, token: 'x' }) }),
      await call('end-session', `/oidc/session/end?${form({ client_id: id })}`, { headers: { accept: BROWSER } }),
    ];
    for (const a of answers) expectRefused(a);
    expect(errorLines()).toEqual([]);
  });

  it.each(BAD)('%s in the other identifiers: code, refresh_token, token, request_uri, user_code, id_token_hint, state, the interaction uid', async (_name, c) => {
    const token = `${randomBytes(16).toString('base64url')}${c}x`;
    const answers = [
      await call('token (code)', '/oidc/token', { method: 'POST', headers: FORM, body: form({ client_id: 'iam-console', grant_type: 'authorization_code', code: token, redirect_uri: redirect, code_verifier: 'x'.repeat(43) }) }),
      await call('token (refresh_token)', '/oidc/token', { method: 'POST', headers: FORM, body: form({ client_id: 'iam-console', grant_type: 'refresh_token', refresh_token: token }) }),
      await call('token (device_code)', '/oidc/token', { method: 'POST', headers: { ...FORM, authorization: basic() }, body: form({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: token }) }),
      await call('introspection (token)', '/oidc/token/introspection', { method: 'POST', headers: { ...FORM, authorization: basic() }, body: form({ token }) }),
      await call('revocation (token)', '/oidc/token/revocation', { method: 'POST', headers: { ...FORM, authorization: basic() }, body: form({ token }) }),
      await call('auth (request_uri)', authQuery({ request_uri: `urn:ietf:params:oauth:request_uri:${token}` }), { headers: { accept: BROWSER } }),
      await call('auth (state)', authQuery({ state: `s${c}` }), { headers: { accept: BROWSER } }),
      await call('auth (nonce)', authQuery({ nonce: `n${c}` }), { headers: { accept: BROWSER } }),
      await parThenAuthorize(c),
      await call('device/auth (acr_values)', '/oidc/device/auth', { method: 'POST', headers: { ...FORM, authorization: basic() }, body: form({ client_id: confidential.clientId, scope: 'openid', acr_values: `urn:iam:acr:pwd${c}` }) }),
      await call('par (state)', '/oidc/par', { method: 'POST', headers: { ...FORM, authorization: basic() }, body: form({ client_id: confidential.clientId, response_type: 'code', redirect_uri: 'http://127.0.0.1:21999/cb', scope: 'openid', state: `s${c}`, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }) }),
      await call('device/auth (scope)', '/oidc/device/auth', { method: 'POST', headers: { ...FORM, authorization: basic() }, body: form({ scope: `openid${c}` }) }),
      await call('device (user_code)', `/oidc/device?${form({ user_code: `ABCD${c}EFGH` })}`, { headers: { accept: BROWSER } }),
      await postUserCode(`ABCD${c}EFGH`),
      await call('end-session (id_token_hint)', `/oidc/session/end?${form({ id_token_hint: `eyJhbGciOiJFZERTQSJ9.${token}.x` })}`, { headers: { accept: BROWSER } }),
      await call('end-session (hint, client)', `/oidc/session/end?${form({ client_id: 'iam-console', id_token_hint: token, post_logout_redirect_uri: redirect })}`, { headers: { accept: BROWSER } }),
      await call('interaction uid', `/oidc/interaction/${encodeURIComponent(`abc${c}def`)}`, { headers: { accept: BROWSER } }),
      await call('interaction uid (login)', `/oidc/interaction/${encodeURIComponent(`abc${c}def`)}/login`, { method: 'POST', headers: { ...FORM, accept: BROWSER }, body: form({ email: 'a@b.c', password: 'x' }) }),
    ];
    for (const a of answers) expectRefused(a);
    expect(errorLines()).toEqual([]);
  });

  it.each(BAD)('%s in the hosted sign-in form\'s email → a 4xx page', async (_name, c) => {
    const started = await call('auth', authQuery({}), { headers: { accept: BROWSER } });
    expect(started.status).toBe(303);
    const res = await fetch(base + authQuery({}), { redirect: 'manual', headers: { accept: BROWSER } });
    const cookie = res.headers.getSetCookie().map((s) => s.split(';')[0]).join('; ');
    const page = new URL(res.headers.get('location')!, base);
    const a = await call('sign-in', `${page.pathname}/login`, { method: 'POST', headers: { ...FORM, accept: BROWSER, cookie }, body: form({ email: `admin${c}@example.com`, password: ADMIN.password }) });
    expectRefused(a);
    expect(errorLines()).toEqual([]);
  });
});
