/**
 * What the audit trail says of a change, end to end (#20): catalog administration (create, a
 * price set to 1 and back, archive, reactivate, stock) is recorded with its actor and the before
 * and after of each changed field; a password reset an administrator sends from the console names
 * the administrator (an anonymous one stays anonymous, with the same answer); a role's description
 * change and a user's phone change name both values. Requests through the gateway, entries read
 * back through GET /api/v1/audit-events.
 */
import { randomUUID } from 'node:crypto';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, gql, http, startTestSystem, strongPassword, uniqueEmail, userHolding } from './harness';

jest.setTimeout(120_000);

interface Entry {
  action: string;
  actor: { type: string; id: string | null; email: string | null };
  target: { type: string; id: string };
  changes: Array<{ field: string; before?: unknown; after?: unknown; redacted?: boolean }>;
}

describe('audit trail: who changed what, from what to what (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  let adminId: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, { token: admin, ...opts });
  /** The entries about `targetId` once there are `count`, oldest first. */
  const trailOf = (targetId: string, count: number): Promise<Entry[]> =>
    eventually(async () => {
      const items = (await call('GET', `/api/v1/audit-events?targetId=${targetId}&pageSize=100`)).json.items as Entry[];
      return items.length >= count ? [...items].reverse() : undefined;
    }, 15_000, 100);

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge' } });
    const login = await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN });
    admin = login.json.token;
    adminId = login.json.user.id;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('catalog administration by a products.manage holder: every write an entry with the holder as actor and each changed field before and after', async () => {
    const manager = await userHolding(sys.url(), admin, ['products.manage']);
    // The trail knows who the manager is (their email) once it has recorded their creation.
    await trailOf(manager.id, 1);
    const as = (query: string) => gql(sys.url(), query, { token: manager.token });
    const sku = `AUD-${randomUUID().slice(0, 8).toUpperCase()}`;
    const made = await as(`mutation { createProduct(input: {sku: "${sku}", name: "Audited lamp", priceMinor: 1500, currency: "EUR", onHand: 3}) { id } }`);
    expect(made.codes).toEqual([]);
    const id = made.data.createProduct.id as string;
    for (const q of [
      `mutation { updateProduct(id: "${id}", input: {priceMinor: 1}) { id } }`,
      `mutation { updateProduct(id: "${id}", input: {priceMinor: 1500}) { id } }`,
      `mutation { archiveProduct(id: "${id}") { id } }`,
      `mutation { updateProduct(id: "${id}", input: {status: ACTIVE}) { id } }`,
      `mutation { adjustStock(id: "${id}", input: {delta: 4}) { id } }`,
      `mutation { adjustStock(id: "${id}", input: {setOnHand: 2}) { id } }`,
    ]) {
      expect((await as(q)).codes).toEqual([]);
    }
    const trail = await trailOf(id, 7);
    expect(trail.every((e) => e.actor.type === 'user' && e.actor.id === manager.id && e.actor.email === manager.email && e.target.type === 'product')).toBe(true);
    expect(trail.map((e) => [e.action, e.changes])).toEqual([
      [
        'product.created',
        [
          { field: 'sku', after: sku },
          { field: 'name', after: 'Audited lamp' },
          { field: 'priceMinor', after: 1500 },
          { field: 'currency', after: 'EUR' },
          { field: 'status', after: 'ACTIVE' },
          { field: 'onHand', after: 3 },
        ],
      ],
      ['product.updated', [{ field: 'priceMinor', before: 1500, after: 1 }]],
      ['product.updated', [{ field: 'priceMinor', before: 1, after: 1500 }]],
      ['product.archived', [{ field: 'status', before: 'ACTIVE', after: 'ARCHIVED' }]],
      ['product.reactivated', [{ field: 'status', before: 'ARCHIVED', after: 'ACTIVE' }]],
      ['product.stock.adjusted', [{ field: 'onHand', before: 3, after: 7 }]],
      ['product.stock.adjusted', [{ field: 'onHand', before: 7, after: 2 }]],
    ]);
  });

  it('a password reset sent by an administrator (console: with its token) names the administrator; an anonymous one stays anonymous; the same 202 either way', async () => {
    const email = uniqueEmail('reset-by-admin');
    const user = (await call('POST', '/api/v1/users', { body: { firstName: 'Res', lastName: 'Et', email, password: strongPassword() } })).json;
    const byAdmin = await call('POST', '/api/v1/auth/password-reset/request', { body: { email } });
    const anonymous = await call('POST', '/api/v1/auth/password-reset/request', { body: { email }, token: undefined });
    const forged = await call('POST', '/api/v1/auth/password-reset/request', { body: { email }, token: 'not.a.token' });
    const nobody = await call('POST', '/api/v1/auth/password-reset/request', { body: { email: uniqueEmail('nobody') } });
    for (const r of [byAdmin, anonymous, forged, nobody]) expect([r.status, r.json]).toEqual([202, byAdmin.json]);
    // Identity's worker turns the accepted requests into events later; each keeps its request's caller.
    const requests = (await trailOf(user.id, 4)).filter((e) => e.action === 'password.reset.requested');
    expect(requests).toHaveLength(3);
    expect(requests.filter((e) => e.actor.type === 'user').map((e) => e.actor)).toEqual([{ type: 'user', id: adminId, email: ADMIN.email }]);
    expect(requests.filter((e) => e.actor.type === 'anonymous')).toHaveLength(2);
  });

  it("a role's description and a user's phone: the change names both values", async () => {
    const role = (await call('POST', '/api/v1/roles', { body: { name: `described-${randomUUID().slice(0, 8)}`, description: 'Answers tickets' } })).json;
    expect((await call('PUT', `/api/v1/roles/${role.id}`, { body: { description: 'Answers tickets and calls' } })).status).toBe(200);
    const [created, updated] = await trailOf(role.id, 2);
    expect(created!.changes).toEqual([{ field: 'name', after: role.name }, { field: 'description', after: 'Answers tickets' }]);
    expect(updated).toMatchObject({ action: 'role.updated', actor: { id: adminId }, changes: [{ field: 'description', before: 'Answers tickets', after: 'Answers tickets and calls' }] });

    const user = (await call('POST', '/api/v1/users', { body: { firstName: 'Pho', lastName: 'Ne', email: uniqueEmail('phone'), phone: 5550100, password: strongPassword() } })).json;
    expect((await call('PUT', `/api/v1/users/${user.id}`, { body: { phone: 5550199, firstName: 'Phoebe' } })).status).toBe(200);
    const [, changed] = await trailOf(user.id, 2);
    expect(changed!.changes).toEqual([
      { field: 'firstName', before: 'Pho', after: 'Phoebe' },
      { field: 'phone', before: 5550100, after: 5550199 },
    ]);
  });
});
