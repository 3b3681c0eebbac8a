/**
 * Issue #26, defect 3: NUL and the other control characters, and unpaired surrogates, in any
 * string a request carries are a 400 problem+json naming the field, on every route (one shared
 * schema format, gateway/src/plugins/app/validation.ts), and nothing is written or queued: a NUL
 * in a login email was a 500, and a password-reset request with one was accepted and then failed
 * on every retry for an hour. Tab, line feed and carriage return stay allowed where text is.
 */
import { randomUUID } from 'node:crypto';
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(120_000);

const BAD: Array<[string, string]> = [
  ['NUL', '\u0000'],
  ['BEL', '\u0007'],
  ['vertical tab', '\u000b'],
  ['escape', '\u001b'],
  ['DEL', '\u007f'],
  ['C1 NEL', '\u0085'],
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate', '\udfff'],
];

describe('control characters in request strings → 400 problem+json, nothing written', () => {
  let sys: TestSystem;
  let admin: string;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge' } });
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  function expectRefused(r: HttpResult, field: string, where: string): void {
    expect({ where, status: r.status, type: r.headers.get('content-type') }).toEqual({ where, status: 400, type: expect.stringContaining('application/problem+json') });
    expect({ where, traceId: r.json.traceId, errors: r.json.errors }).toEqual({
      where,
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      errors: [{ field, message: expect.stringMatching(/control characters/) }],
    });
  }

  const count = async (sql: string) => Number((await sys.identity.dataSource.query<Array<{ n: string }>>(sql))[0]!.n);

  it.each(BAD)('%s in a login email (Full and Compact), a reset request and a verification token', async (_name, c) => {
    const email = `a${c}@example.com`;
    expectRefused(await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password: 'x' } }), 'body.email', 'full login');
    expectRefused(await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: { email, password: 'x' } }), 'body.email', 'compact login');
    const queued = await count('SELECT count(*) AS n FROM email_action_requests');
    expectRefused(await http(sys.url(), 'POST', '/api/v1/auth/password-reset/request', { body: { email } }), 'body.email', 'reset request');
    expect(await count('SELECT count(*) AS n FROM email_action_requests')).toBe(queued);
    expectRefused(await http(sys.url(), 'POST', '/api/v1/auth/email-verification/confirm', { body: { token: `t${c}` } }), 'body.token', 'verification confirm');
  });

  it.each(BAD)('%s in a user, a role, a query string → 400; nothing created', async (_name, c) => {
    const users = await sys.directory.dataSource.query<Array<{ n: string }>>('SELECT count(*) AS n FROM users');
    expectRefused(
      await http(sys.url(), 'POST', '/api/v1/users', { token: admin, body: { firstName: `Ada${c}`, lastName: 'L', email: uniqueEmail('ctl'), password: strongPassword() } }),
      'body.firstName',
      'user create',
    );
    expectRefused(await http(sys.url(), 'POST', '/api/v1/user', { token: admin, body: { firstName: 'Ada', lastName: `L${c}`, email: uniqueEmail('ctl'), password: strongPassword() } }), 'body.lastName', 'compact user create');
    expectRefused(await http(sys.url(), 'POST', '/api/v1/roles', { token: admin, body: { name: `kz-${randomUUID().slice(0, 8)}`, description: `d${c}` } }), 'body.description', 'role create');
    // A URL carries UTF-8, in which an unpaired surrogate has no encoding (it arrives as U+FFFD).
    if (!/[\ud800-\udfff]/.test(c)) expectRefused(await http(sys.url(), 'GET', `/api/v1/users?q=${encodeURIComponent(`a${c}`)}`, { token: admin }), 'querystring.q', 'search');
    expect(await sys.directory.dataSource.query('SELECT count(*) AS n FROM users')).toEqual(users);
  });

  it.each(BAD)('%s in a GraphQL variable or string literal → 400 BAD_USER_INPUT before anything runs', async (_name, c) => {
    const gql = async (body: unknown) => http(sys.url(), 'POST', '/api/v1/graphql', { token: admin, body });
    const sku = `CTL-${randomUUID().slice(0, 8)}`;
    const create = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id } }';
    const byVariable = await gql({ query: create, variables: { i: { sku, name: `P${c}`, description: '', priceMinor: 100, currency: 'EUR', onHand: 1 } } });
    expect({ status: byVariable.status, codes: byVariable.json.errors?.map((e: { extensions: { code: string } }) => e.extensions.code), data: byVariable.json.data }).toEqual({
      status: 400,
      codes: ['BAD_USER_INPUT'],
      data: undefined,
    });
    expect(byVariable.json.errors[0].message).toMatch(/\$i\.name must not contain control characters/);
    const escaped = `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    const byLiteral = await gql({ query: `{ products(q: "a${escaped}") { products { id } } }` });
    expect({ status: byLiteral.status, code: byLiteral.json.errors?.[0]?.extensions?.code }).toEqual({ status: 400, code: 'BAD_USER_INPUT' });
    const [n] = await sys.commerce.dataSource.query<Array<{ n: string }>>('SELECT count(*) AS n FROM products WHERE sku = $1', [sku]);
    expect(n!.n).toBe('0');
  });

  it('tab, line feed and carriage return are text: a description with them is accepted', async () => {
    const r = await http(sys.url(), 'POST', '/api/v1/roles', { token: admin, body: { name: `kz-${randomUUID().slice(0, 8)}`, description: 'line one\nline two\r\n\tindented' } });
    expect(r.status).toBe(201);
    expect(r.json.description).toBe('line one\nline two\r\n\tindented');
  });
});
