/**
 * The edge BFF end to end through the running gateway (edge profile on, real tokens from
 * identity, the commerce service on its own database, real PostgreSQL and the test bus):
 * checkouts under concurrency never oversell, idempotent replays place one order, cancelling gives
 * stock back once, customers only ever see their own orders, prices cannot be tampered with,
 * product administration needs products.manage, the catalog's REST paging, query bombs, one
 * checkout per document, no alias or variable named like an Object.prototype property,
 * introspection only with a token (the default), and what the kit's edge.test.mjs expects. Every response is checked against the OpenAPI documents.
 */
import { randomUUID } from 'node:crypto';
import { ADMIN, EDGE_ENV, type HttpResult, type TestSystem, created, http, persist, signedIn, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(120_000);

interface GqlResult {
  status: number;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- GraphQL data is checked field by field
  errors: Array<{ message: string; extensions: { code: string; errors?: Array<{ field: string }> } }> | undefined;
  codes: string[];
  ms: number;
}

describe('edge BFF (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const customers: Array<{ id: string; token: string }> = [];
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);

  async function gql(query: string, opts: { token?: string; variables?: Record<string, unknown>; operationName?: string } = {}): Promise<GqlResult> {
    const started = process.hrtime.bigint();
    const r = await call('POST', '/api/v1/graphql', { body: { query, variables: opts.variables, operationName: opts.operationName }, token: opts.token });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const errors = r.status === 200 || r.headers.get('content-type') === 'application/json; charset=utf-8' ? r.json?.errors : undefined;
    return { status: r.status, data: r.json?.data, errors, codes: (errors ?? []).map((e: { extensions: { code: string } }) => e.extensions.code), ms };
  }

  // Setup steps, sent again while the answer is "not now" (harness persist).
  const login = (email: string, password: string): Promise<{ id: string; token: string }> => signedIn(sys.url(), email, password);

  async function newUser(roles: string[] = []): Promise<{ id: string; token: string }> {
    const email = uniqueEmail('edge');
    const password = strongPassword();
    await created(sys.url(), '/api/v1/users', { firstName: 'Edge', lastName: 'Buyer', email, password, roles }, { token: admin, q: email });
    return login(email, password);
  }

  const CREATE = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id sku priceMinor available } }';
  // Active products' names are unique (their lookalike keys): by default each its own, from its sku.
  async function product(onHand: number, priceMinor = 1_500, name?: string): Promise<{ id: string; sku: string; priceMinor: number }> {
    const sku = `E2E-${randomUUID().slice(0, 8).toUpperCase()}`;
    const r = await gql(CREATE, { token: admin, variables: { i: { sku, name: name ?? `E2E product ${sku}`, priceMinor, currency: 'EUR', onHand } } });
    expect(r.errors).toBeUndefined();
    return r.data.createProduct;
  }
  const available = async (id: string): Promise<number> => (await call('GET', `/api/v1/products/${id}`)).json.product.available;

  beforeAll(async () => {
    sys = await startTestSystem({ env: EDGE_ENV });
    admin = (await login(ADMIN.email, ADMIN.password)).token;
    for (let i = 0; i < 10; i++) customers.push(await newUser());
  });

  afterAll(async () => {
    await sys?.stop();
  });

  describe("the kit's edge.test.mjs expectations", () => {
    it('GET /healthz → 200 {status: ok}', async () => {
      const r = await call('GET', '/healthz');
      expect({ status: r.status, body: r.json }).toEqual({ status: 200, body: { status: 'ok' } });
    });

    it('GET /api/v1/products (public) → 200 {products, nextPageToken} with typed fields; page_size 0 / 101 / abc → 400 problem+json', async () => {
      await product(3);
      const r = await call('GET', '/api/v1/products');
      expect(r.status).toBe(200);
      expect(Array.isArray(r.json.products)).toBe(true);
      expect(r.json.nextPageToken === null || typeof r.json.nextPageToken === 'string').toBe(true);
      for (const p of r.json.products) {
        for (const f of ['id', 'sku', 'name', 'currency', 'status']) expect(typeof p[f]).toBe('string');
        expect(typeof p.priceMinor).toBe('number');
        expect(['ACTIVE', 'ARCHIVED']).toContain(p.status);
      }
      for (const v of ['0', '101', 'abc']) {
        const bad = await call('GET', `/api/v1/products?page_size=${v}`);
        expect({ v, status: bad.status, type: bad.headers.get('content-type') }).toEqual({ v, status: 400, type: 'application/problem+json' });
      }
    });

    it('GraphQL: cart without a token → UNAUTHENTICATED; { __typename } → 200 with data and no errors', async () => {
      expect((await gql('{ cart { customerId } }')).codes).toContain('UNAUTHENTICATED');
      const r = await gql('{ __typename }');
      expect({ status: r.status, errors: r.errors, typename: typeof r.data?.__typename }).toEqual({ status: 200, errors: undefined, typename: 'string' });
    });
  });

  it('the catalog pages by an opaque token, filters by status and q, refuses a forged token', async () => {
    const tag = `Paged${randomUUID().slice(0, 8)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await product(1, 100, `${tag} ${i}`)).id);
    await gql(`mutation { archiveProduct(id: "${ids[0]}") { status } }`, { token: admin });
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const r: HttpResult = await call('GET', `/api/v1/products?page_size=2&q=${tag}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
      seen.push(...r.json.products.map((p: { id: string }) => p.id));
      token = r.json.nextPageToken;
      pages++;
    } while (token && pages < 10);
    expect({ pages, seen }).toEqual({ pages: 3, seen: ids });
    expect((await call('GET', `/api/v1/products?q=${tag}&status=archived`)).json.products.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect((await call('GET', `/api/v1/products?q=${tag}&status=active&page_size=100`)).json.products).toHaveLength(4);
    const forged = await call('GET', '/api/v1/products?page_token=eyJ0IjoiMSJ9');
    expect(forged.status).toBe(400);
    expect(forged.json.errors[0].field).toBe('querystring.page_token');
    expect((await call('GET', `/api/v1/products/${randomUUID()}`)).status).toBe(404);
  });

  it('100 concurrent checkouts of one product with stock 25 by 10 customers: exactly 25 orders, available 0, no 5xx', async () => {
    const p = await product(25, 990);
    const checkout = (i: number) =>
      gql(`mutation($k: String!) { checkout(input: {idempotencyKey: $k, lines: [{productId: "${p.id}", quantity: 1}]}) { id customerId totalMinor } }`, {
        token: customers[i % 10]!.token,
        variables: { k: `rush-${i}` },
      });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => checkout(i)));
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([200]));
    // The checkouts of one product queue on its stock row, one commit each: on a loaded machine
    // the last ones miss the deadline (UPSTREAM_UNAVAILABLE), and such an answer says nothing of
    // the outcome (the order may have been placed). A client retries with the same idempotency
    // key, which replays a placed order and never reserves twice: so does this one, until every
    // checkout has its answer. On an idle machine there is nothing to retry.
    const unknown = (r: GqlResult) => r.codes.length === 1 && r.codes[0] === 'UPSTREAM_UNAVAILABLE';
    for (let round = 0; round < 20 && results.some(unknown); round++) {
      const pending = results.flatMap((r, i) => (unknown(r) ? [i] : []));
      const again = await Promise.all(pending.map(checkout));
      pending.forEach((i, j) => (results[i] = again[j]!));
      expect(again.filter((r) => r.status !== 200)).toEqual([]);
    }
    const placed = results.filter((r) => r.errors === undefined);
    expect(placed).toHaveLength(25);
    expect(new Set(placed.map((r) => r.data.checkout.id)).size).toBe(25);
    expect(placed.every((r) => r.data.checkout.totalMinor === 990)).toBe(true);
    expect(new Set(results.flatMap((r) => r.codes))).toEqual(new Set(['INSUFFICIENT_STOCK']));
    expect(await available(p.id)).toBe(0);
    // Each customer's own orders of this product add up to 25.
    let mine = 0;
    for (const c of customers) {
      const r = await gql('{ orders(pageSize: 100, status: CONFIRMED) { orders { customerId lines { productId } } } }', { token: c.token });
      const orders = r.data.orders.orders as Array<{ customerId: string; lines: Array<{ productId: string }> }>;
      expect(orders.every((o) => o.customerId === c.id)).toBe(true);
      mine += orders.filter((o) => o.lines.some((l) => l.productId === p.id)).length;
    }
    expect(mine).toBe(25);
  });

  it('20 concurrent identical idempotent checkouts → one order, one reservation; the key with other lines → IDEMPOTENCY_CONFLICT', async () => {
    const p = await product(10, 1_200);
    const buyer = customers[0]!;
    const q = `mutation { createOrder(input: {idempotencyKey: "same-key-${p.id}", lines: [{productId: "${p.id}", quantity: 3}]}) { id totalMinor } }`;
    const results = await Promise.all(Array.from({ length: 20 }, () => gql(q, { token: buyer.token })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.flatMap((r) => r.codes)).toEqual([]);
    expect(new Set(results.map((r) => r.data.createOrder.id)).size).toBe(1);
    expect(results[0]!.data.createOrder.totalMinor).toBe(3_600);
    expect(await available(p.id)).toBe(7);
    const orders = await gql('{ orders(pageSize: 100) { orders { id lines { productId } } } }', { token: buyer.token });
    expect(orders.data.orders.orders.filter((o: { lines: Array<{ productId: string }> }) => o.lines.some((l) => l.productId === p.id))).toHaveLength(1);
    const other = await gql(q.replace('quantity: 3', 'quantity: 2'), { token: buyer.token });
    expect(other.codes).toEqual(['IDEMPOTENCY_CONFLICT']);
  });

  it('cancel gives the stock back once (concurrent cancels included); A never sees or cancels B’s order', async () => {
    const p = await product(5);
    const [a, b] = [customers[1]!, customers[2]!];
    const placed = await gql(`mutation { checkout(input: {idempotencyKey: "to-cancel", lines: [{productId: "${p.id}", quantity: 4}]}) { id customerId status } }`, { token: b.token });
    const order = placed.data.checkout as { id: string; customerId: string; status: string };
    expect(order).toMatchObject({ customerId: b.id, status: 'CONFIRMED' });
    expect(await available(p.id)).toBe(1);

    expect((await gql(`{ order(id: "${order.id}") { id } }`, { token: a.token })).data).toEqual({ order: null });
    const aOrders = await gql('{ orders(pageSize: 100) { orders { id } } }', { token: a.token });
    expect(aOrders.data.orders.orders.map((o: { id: string }) => o.id)).not.toContain(order.id);
    expect((await gql(`mutation { cancelOrder(id: "${order.id}") { id } }`, { token: a.token })).codes).toEqual(['NOT_FOUND']);
    expect(await available(p.id)).toBe(1);

    const cancels = await Promise.all(Array.from({ length: 5 }, () => gql(`mutation { cancelOrder(id: "${order.id}") { status } }`, { token: b.token })));
    expect(cancels.map((c) => c.data?.cancelOrder?.status)).toEqual(Array(5).fill('CANCELLED'));
    expect(await available(p.id)).toBe(5);
    expect((await gql(`mutation { cancelOrder(id: "${order.id}") { status } }`, { token: b.token })).data.cancelOrder.status).toBe('CANCELLED');
    expect(await available(p.id)).toBe(5);
    expect((await gql(`{ order(id: "${order.id}") { status customerId } }`, { token: b.token })).data.order).toEqual({ status: 'CANCELLED', customerId: b.id });
  });

  it('prices cannot be tampered with: there is no price input (a validation error), and the total comes from the catalog', async () => {
    const p = await product(5, 7_777);
    const c = customers[3]!;
    const tampered = await gql(`mutation { checkout(input: {idempotencyKey: "tamper", lines: [{productId: "${p.id}", quantity: 1, unitPriceMinor: 1}]}) { id } }`, { token: c.token });
    expect({ status: tampered.status, codes: tampered.codes, data: tampered.data }).toEqual({ status: 400, codes: ['BAD_USER_INPUT'], data: undefined });
    const viaCart = await gql(`mutation { updateCart(lines: [{productId: "${p.id}", quantity: 2, priceMinor: 1}]) { subtotalMinor } }`, { token: c.token });
    expect(viaCart.codes).toEqual(['BAD_USER_INPUT']);
    const cart = await gql(`mutation { updateCart(lines: [{productId: "${p.id}", quantity: 2}]) { customerId subtotalMinor lines { product { priceMinor } } } }`, { token: c.token });
    expect(cart.data.updateCart).toEqual({ customerId: c.id, subtotalMinor: 15_554, lines: [{ product: { priceMinor: 7_777 } }] });
    const order = await gql('mutation { checkout(input: {idempotencyKey: "from-cart"}) { totalMinor lines { unitPriceMinor quantity } } }', { token: c.token });
    expect(order.data.checkout).toEqual({ totalMinor: 15_554, lines: [{ unitPriceMinor: 7_777, quantity: 2 }] });
    expect((await gql('{ cart { lines { productId } } }', { token: c.token })).data.cart.lines).toEqual([]);
    expect(await available(p.id)).toBe(3);
  });

  it('product administration needs products.manage (or Administrator)', async () => {
    const input = { i: { sku: `GATE-${randomUUID().slice(0, 8).toUpperCase()}`, name: 'Gated', priceMinor: 100, currency: 'EUR', onHand: 1 } };
    expect((await gql(CREATE, { variables: input })).codes).toEqual(['UNAUTHENTICATED']);
    expect((await gql(CREATE, { token: customers[4]!.token, variables: input })).codes).toEqual(['FORBIDDEN']);
    // A role granting products.manage, made through the Full profile, and a user holding it (setup steps).
    const roleName = `catalog-${randomUUID().slice(0, 8)}`;
    const role = await created(sys.url(), '/api/v1/roles', { name: roleName, description: 'catalog managers' }, { token: admin, q: roleName });
    const perms = await persist(() => call('GET', '/api/v1/permissions?q=products.manage', { token: admin }));
    const permissionId = perms.json.items.find((x: { name: string }) => x.name === 'products.manage').id as string;
    expect((await persist(() => call('POST', '/api/v1/role-permissions', { token: admin, body: { roleId: role.id, permissionId } }))).status).toBe(201);
    const manager = await newUser([role.name]);
    const made = await gql(CREATE, { token: manager.token, variables: input });
    expect(made.errors).toBeUndefined();
    const id = made.data.createProduct.id as string;
    const stock = await gql(`mutation { adjustStock(id: "${id}", input: {delta: 9}) { available stock { onHand reserved } } }`, { token: manager.token });
    expect(stock.data.adjustStock).toEqual({ available: 10, stock: { onHand: 10, reserved: 0 } });
    expect((await gql(`mutation { archiveProduct(id: "${id}") { status } }`, { token: customers[4]!.token })).codes).toEqual(['FORBIDDEN']);
    expect((await gql(`mutation { archiveProduct(id: "${id}") { status } }`, { token: manager.token })).data.archiveProduct.status).toBe('ARCHIVED');
  });

  it('a document holds at most one checkout: ten aliased ones, two through fragments or operations are refused before anything runs (400, BAD_USER_INPUT), nothing reserved', async () => {
    const p = await product(100);
    const buyer = await newUser();
    const order = (field: string, key: string) => `${field}(input: {idempotencyKey: "${key}", lines: [{productId: "${p.id}", quantity: 1}]}) { id }`;
    const documents: Record<string, [string, string?]> = {
      tenAliases: [`mutation { ${Array.from({ length: 10 }, (_, i) => `c${i}: ${order('checkout', `ten-${i}`)}`).join(' ')} }`],
      checkoutAndCreateOrder: [`mutation { ${order('checkout', 'a')} ${order('createOrder', 'b')} }`],
      fragmentSpreads: [`mutation { ...A ...B } fragment A on Mutation { ${order('checkout', 'a')} } fragment B on Mutation { b: ${order('createOrder', 'b')} }`],
      inlineFragment: [`mutation { ${order('checkout', 'a')} ... on Mutation { b: ${order('checkout', 'b')} } }`],
      twoOperations: [`mutation A { ${order('checkout', 'a')} } mutation B { ${order('createOrder', 'b')} }`, 'A'],
    };
    for (const [name, [query, operationName]] of Object.entries(documents)) {
      // Twice: the second run of a document is the JIT-compiled one.
      for (const run of [1, 2]) {
        const r = await gql(query, { token: buyer.token, operationName });
        expect({ name, run, status: r.status, codes: r.codes, data: r.data }).toEqual({ name, run, status: 400, codes: ['BAD_USER_INPUT'], data: undefined });
        expect(r.errors![0]!.message).toMatch(/at most 1 checkout/);
      }
    }
    expect(await available(p.id)).toBe(100);
    expect((await gql('{ orders(pageSize: 100) { orders { id } } }', { token: buyer.token })).data.orders.orders).toEqual([]);
    // One checkout in a document is the rule, not a refusal.
    const one = await gql(`mutation { only: ${order('checkout', 'one')} }`, { token: buyer.token });
    expect(one.errors).toBeUndefined();
    expect(await available(p.id)).toBe(99);
  });

  it('aliases and variables named like an Object.prototype property (__proto__, constructor, ...) are refused (400, BAD_USER_INPUT), compiled or not', async () => {
    const names = ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__', '__lookupSetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString'];
    for (const name of names) {
      const documents = [
        `{ ${name}: __typename }`,
        `{ products(pageSize: 1) { ${name}: nextPageToken } }`,
        `{ ...F } fragment F on Query { ${name}: __typename }`,
        `query($${name}: String) { products(q: $${name}) { nextPageToken } }`,
      ];
      for (const query of documents) {
        for (const run of [1, 2, 3]) {
          const r = await gql(query, { token: customers[7]!.token });
          expect({ query, run, status: r.status, codes: r.codes, data: r.data }).toEqual({ query, run, status: 400, codes: ['BAD_USER_INPUT'], data: undefined });
        }
      }
    }
    // Other aliases answer, compiled (from the second run) or not.
    for (const run of [1, 2, 3]) expect({ run, data: (await gql('{ proto: __typename ctor: __typename }')).data }).toEqual({ run, data: { proto: 'Query', ctor: 'Query' } });
  });

  it('introspection (GRAPHQL_INTROSPECTION=authenticated, the default): any valid token may, anonymous callers may not and get no name suggestions; { __typename } stays public', async () => {
    const token = customers[8]!.token;
    const introspections = ['{ __schema { queryType { name } } }', '{ __type(name: "Product") { name } }', '{ __schema { types { name } } }'];
    // In both orders: the GraphQL server caches a document by its text, the decision is per caller.
    for (const query of introspections) {
      for (const who of [undefined, token, undefined, token]) {
        const r = await gql(query, { token: who });
        if (who) expect({ query, status: r.status, errors: r.errors }).toEqual({ query, status: 200, errors: undefined });
        else expect({ query, status: r.status, codes: [...new Set(r.codes)], data: r.data }).toEqual({ query, status: 400, codes: ['BAD_USER_INPUT'], data: undefined });
      }
    }
    const typo = '{ prodcts { nextPageToken } }';
    expect((await gql(typo)).errors![0]!.message).not.toMatch(/Did you mean/);
    expect((await gql(typo, { token })).errors![0]!.message).toMatch(/Did you mean "products"/);
    expect((await gql('{ products(status: ACTIV) { nextPageToken } }')).errors![0]!.message).not.toMatch(/Did you mean/);
    expect((await gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
  });

  it('query bombs are refused in milliseconds with a GraphQL error, never a 5xx; a present but invalid token is 401', async () => {
    const bombs = {
      aliases: `{ ${Array.from({ length: 50 }, (_, i) => `a${i}: orders(pageSize: 100) { orders { lines { product { name } } } }`).join(' ')} }`,
      nested: '{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }',
      // Two allowed root fields, but up to 2 × 100 orders × 50 lines × 9 fields.
      wide: `{ a: orders(pageSize: 100) { orders { lines { sku name quantity unitPriceMinor product { id name description } } } } b: orders(pageSize: 100) { orders { lines { sku name quantity unitPriceMinor product { id name description } } } } }`,
    };
    const ms: Record<string, number> = {};
    for (const [name, query] of Object.entries(bombs)) {
      const r = await gql(query, { token: customers[5]!.token });
      expect({ name, status: r.status, codes: r.codes.slice(0, 1) }).toEqual({ name, status: 400, codes: ['BAD_USER_INPUT'] });
      ms[name] = Math.round(r.ms * 10) / 10;
    }
    process.stdout.write(`edge e2e bomb refusals over HTTP (ms): ${JSON.stringify(ms)}\n`);
    for (const [name, t] of Object.entries(ms)) expect({ name, fast: t < 500 }).toEqual({ name, fast: true });
    const forged = await call('POST', '/api/v1/graphql', { body: { query: '{ cart { customerId } }' }, token: 'not.a.jwt' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});
