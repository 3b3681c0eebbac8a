/**
 * Rights in effect are the ones stored now, not the ones a token was issued with (#20): a user
 * granted products.manage or audit.read, signed in, then demoted keeps the permission in their
 * token (the gateway lets the call through) but the service behind it asks the directory and
 * refuses: a catalog write is GraphQL FORBIDDEN with nothing written, the audit routes are 403.
 * Black-box through the gateway, real tokens from identity.
 */
import { randomUUID } from 'node:crypto';
import { ADMIN, type TestSystem, gql, http, startTestSystem, userHolding } from './harness';

jest.setTimeout(120_000);

describe('current rights, not the token’s (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  /** Removes every role of the user (an administrator's write): the token they hold is unchanged. */
  const demote = async (userId: string) => expect((await call('PUT', `/api/v1/users/${userId}`, { token: admin, body: { roles: [] } })).status).toBe(200);
  const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { permissions: string[] };

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge' } });
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('products.manage: a demoted manager’s old token still carries it, but every catalog write is FORBIDDEN and nothing changes', async () => {
    const manager = await userHolding(sys.url(), admin, ['products.manage']);
    const sku = `CUR-${randomUUID().slice(0, 8).toUpperCase()}`;
    const made = await gql(sys.url(), 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id } }', {
      token: manager.token,
      variables: { i: { sku, name: 'Current', priceMinor: 500, currency: 'EUR', onHand: 2 } },
    });
    expect(made.codes).toEqual([]);
    const id = made.data.createProduct.id as string;

    await demote(manager.id);
    expect(claims(manager.token).permissions).toContain('products.manage');
    const writes = [
      `mutation { createProduct(input: {sku: "${sku}-2", name: "x", priceMinor: 1, currency: "EUR", onHand: 1}) { id } }`,
      `mutation { updateProduct(id: "${id}", input: {priceMinor: 1}) { id } }`,
      `mutation { archiveProduct(id: "${id}") { id } }`,
      `mutation { adjustStock(id: "${id}", input: {delta: 5}) { id } }`,
    ];
    for (const w of writes) {
      const r = await gql(sys.url(), w, { token: manager.token });
      expect({ w, codes: r.codes, data: r.data }).toEqual({ w, codes: ['FORBIDDEN'], data: null });
    }
    const product = (await call('GET', `/api/v1/products/${id}`)).json.product;
    expect(product).toMatchObject({ priceMinor: 500, status: 'ACTIVE', available: 2 });
    expect((await call('GET', `/api/v1/products?q=${sku}-2`)).json.products).toEqual([]);
    // An Administrator's write still goes through.
    expect((await gql(sys.url(), `mutation { adjustStock(id: "${id}", input: {delta: 1}) { available } }`, { token: admin })).data.adjustStock).toEqual({ available: 3 });
  });

  it('audit.read: a demoted reader’s old token still carries it, but the trail and its verification answer 403', async () => {
    const reader = await userHolding(sys.url(), admin, ['audit.read']);
    expect((await call('GET', '/api/v1/audit-events?pageSize=1', { token: reader.token })).status).toBe(200);
    expect((await call('GET', '/api/v1/audit-events/verify', { token: reader.token })).status).toBe(200);

    await demote(reader.id);
    expect(claims(reader.token).permissions).toContain('audit.read');
    for (const path of ['/api/v1/audit-events?pageSize=1', '/api/v1/audit-events/verify']) {
      const r = await call('GET', path, { token: reader.token });
      expect({ path, status: r.status, type: r.headers.get('content-type') }).toEqual({ path, status: 403, type: expect.stringMatching(/application\/problem\+json/) });
      expect(r.json.traceId).toEqual(expect.any(String));
    }
    expect((await call('GET', '/api/v1/audit-events?pageSize=1', { token: admin })).status).toBe(200);
  });
});
