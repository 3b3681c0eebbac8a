/**
 * Security issue #20 item 5, through the running gateway: names and addresses that look like
 * others by way of other scripts (UTS #39; SECURITY.md "Lookalike names").
 * - Lookalikes of Administrator in Lisu, Cherokee, Canadian Syllabics, Coptic and Tifinagh
 *   letters are 400 naming body.name (their letters are not Identifier_Status=Allowed), and so is
 *   the address `ꓮdmin@example.com`, which then cannot log in; a Latin lookalike of a built-in
 *   name ('Adrninistrator', 'users.rnanage') is 400 too.
 * - A name whose skeleton is another live name's is 409: a Cyrillic role or permission drawn
 *   like a live Latin one, a product named like an active one (the edge's createProduct); two
 *   concurrent creates of lookalikes end in one 201 and one 409.
 * - Names in other scripts that look like no live name keep working, and so does `иван@пример.рф`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword } from './harness';

jest.setTimeout(120_000);

const TRACE_ID = /^[0-9a-f]{32}$/;

function expectProblem(r: HttpResult, status: number, what: unknown): void {
  expect([what, r.status]).toEqual([what, status]);
  expect([what, r.headers.get('content-type')]).toEqual([what, expect.stringMatching(/^application\/problem\+json/)]);
  expect([what, r.json?.status, r.json?.traceId]).toEqual([what, status, expect.stringMatching(TRACE_ID)]);
}

describe('lookalike names (issue #20 item 5, end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, { token: admin, ...opts });
  /** A tag no other name shares, of letters drawn like no other (hex digits and 'q'). */
  const tag = () => `q${randomBytes(4).toString('hex')}`;
  const count = async (path: string, q: string) => (await call('GET', `${path}?q=${encodeURIComponent(q)}&includeDeleted=true&pageSize=100`)).json.totalCount as number;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge' } });
    const r = await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN });
    expect(r.status).toBe(200);
    admin = r.json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('the issue\'s lookalikes of Administrator (Lisu, Cherokee, Canadian Syllabics, Coptic, Tifinagh) are 400 naming body.name, on both profiles', async () => {
    const lookalikes: Array<[string, string]> = [
      ['Lisu ꓮ', '\ua4eedministrator'],
      ['Cherokee Ꭺ', '\u13aadministrator'],
      ['Canadian Syllabics ᗅ', '\u15c5dministrator'],
      ['Coptic ⲟ', 'Administrat\u2c9fr'],
      ['Tifinagh ⵔ and ⵏ', 'ADM\u2d4fN\u2d4fSTRAT\u2d54R'],
      ['Lisu only', '\ua4ee\ua4d3\ua4df\ua4f2\ua4e0'],
      ['Latin rn for m', 'Adrninistrator'],
    ];
    for (const [what, name] of lookalikes) {
      for (const path of ['/api/v1/roles', '/api/v1/role']) {
        const r = await call('POST', path, { body: { name, description: 'lookalike' } });
        expectProblem(r, 400, `${path} ${what}`);
        expect([path, what, r.json.errors]).toEqual([path, what, [expect.objectContaining({ field: 'body.name' })]]);
      }
    }
    const rn = await call('POST', '/api/v1/roles', { body: { name: 'Adrninistrator' } });
    expect(rn.json.errors).toEqual([{ field: 'body.name', message: 'looks like the built-in role Administrator' }]);
    const roles = (await call('GET', '/api/v1/roles?pageSize=100&includeDeleted=true')).json.items as Array<{ name: string }>;
    expect(roles.filter((r) => /istrat|ꓮ|\ua4d3/i.test(r.name)).map((r) => r.name)).toEqual(['Administrator']);
  });

  it('a role renamed to a lookalike of Administrator is 400, and keeps its name', async () => {
    const t = tag();
    const role = await call('POST', '/api/v1/roles', { body: { name: `Support ${t}` } });
    expect(role.status).toBe(201);
    const r = await call('PUT', `/api/v1/roles/${role.json.id}`, { body: { name: '\u13aadministrator' } });
    expectProblem(r, 400, 'rename');
    expect((await call('GET', `/api/v1/roles?id=${role.json.id}`)).json.name).toBe(`Support ${t}`);
  });

  it('`ꓮdmin@example.com` is 400 naming body.email (create on both profiles, update), and no such account can log in', async () => {
    const email = '\ua4eedmin@example.com';
    const password = strongPassword();
    for (const path of ['/api/v1/users', '/api/v1/user']) {
      const r = await call('POST', path, { body: { firstName: 'Look', lastName: 'Alike', email, password } });
      expectProblem(r, 400, path);
      expect([path, r.json.errors]).toEqual([path, [expect.objectContaining({ field: 'body.email', message: expect.stringContaining('U+A4EE') })]]);
    }
    const t = tag();
    const user = await call('POST', '/api/v1/users', { body: { firstName: 'Keep', lastName: t, email: `keep-${t}@example.com`, password } });
    expect(user.status).toBe(201);
    expectProblem(await call('PUT', `/api/v1/users/${user.json.id}`, { body: { email } }), 400, 'update');
    expect((await call('GET', `/api/v1/users?id=${user.json.id}`)).json.email).toBe(`keep-${t}@example.com`);
    expect((await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).status).toBe(401);
    expect(await count('/api/v1/users', 'Alike')).toBe(0);
  });

  it('a permission drawn like users.manage is 400; one drawn like a live permission is 409', async () => {
    for (const name of ['users.rnanage', 'u\u0455ers.manage', '\ua4f4sers.manage', 'USERS.RNANAGE']) {
      const r = await call('POST', '/api/v1/permissions', { body: { name } });
      expectProblem(r, 400, name);
      expect([name, r.json.errors]).toEqual([name, [expect.objectContaining({ field: 'body.name' })]]);
    }
    expect((await call('POST', '/api/v1/permissions', { body: { name: 'users.rnanage' } })).json.errors).toEqual([
      { field: 'body.name', message: 'looks like the built-in permission users.manage' },
    ]);
    const n = randomBytes(4).readUInt32BE(0);
    expect((await call('POST', '/api/v1/permissions', { body: { name: `scope.exec${n}` } })).status).toBe(201);
    const cyrillic = await call('POST', '/api/v1/permissions', { body: { name: `\u0455\u0441\u043e\u0440\u0435.\u0435\u0445\u0435\u0441${n}` } }); // ѕсоре.ехес
    expectProblem(cyrillic, 409, 'Cyrillic ѕсоре.ехес');
    expect(cyrillic.json.errors).toEqual([{ field: 'body.name', message: 'looks like a name already taken' }]);
    expect(await count('/api/v1/permissions', String(n))).toBe(1);
  });

  it('a role in one other script drawn like a live Latin role is 409; once that role is deleted, it is 201', async () => {
    const n = randomBytes(4).readUInt32BE(0);
    const latin = await call('POST', '/api/v1/roles', { body: { name: `ABC-${n}` } });
    expect(latin.status).toBe(201);
    for (const name of [`\u0410\u0412\u0421-${n}`, `abc-${n}`]) {
      const r = await call('POST', '/api/v1/roles', { body: { name } });
      expectProblem(r, 409, name);
      expect([name, r.json.errors]).toEqual([name, [expect.objectContaining({ field: 'body.name' })]]);
    }
    const greek = await call('POST', '/api/v1/roles', { body: { name: `BETA ${n}` } });
    expect(greek.status).toBe(201);
    expectProblem(await call('POST', '/api/v1/roles', { body: { name: `\u0392\u0395\u03a4\u0391 ${n}` } }), 409, 'Greek ΒΕΤΑ');
    expect((await call('DELETE', `/api/v1/roles/${latin.json.id}`)).status).toBe(204);
    expect((await call('POST', '/api/v1/roles', { body: { name: `\u0410\u0412\u0421-${n}` } })).status).toBe(201);
  });

  it('two concurrent creates of lookalike role names: one 201, one 409', async () => {
    const t = tag();
    const names = [`Billing ${t}`, `Bi1ling ${t}`]; // digit one for l
    const results = await Promise.all(names.map((name) => call('POST', '/api/v1/roles', { body: { name } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expectProblem(results.find((r) => r.status === 409)!, 409, 'the loser');
    expect(await count('/api/v1/roles', t)).toBe(1);
  });

  describe('products (edge GraphQL createProduct)', () => {
    const CREATE = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id name status } }';
    const gql = async (query: string, variables: Record<string, unknown>) => {
      const r = await call('POST', '/api/v1/graphql', { body: { query, variables } });
      expect(r.status).toBe(200);
      return r.json as { data?: Record<string, { id: string; name: string; status: string } | null>; errors?: Array<{ extensions: { code: string; errors?: unknown[] } }> };
    };
    const input = (name: string) => ({ i: { sku: `LOOK-${randomUUID().slice(0, 8).toUpperCase()}`, name, priceMinor: 990, currency: 'EUR', onHand: 3 } });
    const products = async (q: string) => (await call('GET', `/api/v1/products?q=${encodeURIComponent(q)}&page_size=100`)).json.products as Array<{ name: string }>;

    it('a product named like an active product (or like it in another case) is BAD_USER_INPUT naming name; nothing is created', async () => {
      const t = tag();
      const made = await gql(CREATE, input(`Desk lamp ${t}`));
      expect(made.errors).toBeUndefined();
      for (const name of [`D\u0435sk lamp ${t}`, `Desk larnp ${t}`, `DESK LAMP ${t}`, `\ua4d3esk lamp ${t}`]) {
        const r = await gql(CREATE, input(name));
        expect([name, r.errors?.map((e) => e.extensions)]).toEqual([name, [{ code: 'BAD_USER_INPUT', errors: [{ field: 'name', message: 'looks like a name already taken' }] }]]);
      }
      expect((await products(t)).map((p) => p.name)).toEqual([`Desk lamp ${t}`]);
    });

    it('two concurrent creates of lookalike product names: one product', async () => {
      const t = tag();
      const results = await Promise.all([gql(CREATE, input(`Gift card ${t}`)), gql(CREATE, input(`G\u0456ft card ${t}`))]);
      expect(results.map((r) => (r.errors ? r.errors[0]!.extensions.code : 'ok')).sort()).toEqual(['BAD_USER_INPUT', 'ok']);
      expect(await products(t)).toHaveLength(1);
    });
  });

  it('names in other scripts that look like no live name keep working, and so does иван@пример.рф', async () => {
    const n = randomBytes(4).readUInt32BE(0);
    for (const name of [`Администратор ${n}`, `Διαχειριστής ${n}`, `管理者 ${n}`, `システム管理者 ${n}`, `管理员 ${n}`, `مدير النظام ${n}`, `Admin 管理者 ${n}`]) {
      const r = await call('POST', '/api/v1/roles', { body: { name } });
      expect([name, r.status]).toEqual([name, 201]);
    }
    const email = `\u0438\u0432\u0430\u043d${n}@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444`; // иван…@пример.рф
    const password = strongPassword();
    const user = await call('POST', '/api/v1/users', { body: { firstName: 'Иван', lastName: 'Петров', email, password } });
    expect(user.status).toBe(201);
    expect((await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).status).toBe(200);
  });
});
