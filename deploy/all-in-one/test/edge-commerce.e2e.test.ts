/**
 * The edge profile's catalog, carts and orders through the running gateway against the real
 * commerce service (on its own database, real tokens from identity, products.manage from the
 * directory): what the REST catalog lists, GraphQL's public products, `pageSize: null`, one
 * BatchGetProducts call per response (counted by commerce's own gRPC metrics), checkout refusals
 * as extensions.code with their field, idempotent replays, createOrder, cancel once, archived
 * products, and product administration (the stock detail, stock never below reserved, update,
 * archive). The gateway's own decisions, with commerce faked at the gRPC level, are
 * gateway/src/routes/edge/edge.test.ts; concurrency, tampering and query bombs end to end are
 * edge.e2e.test.ts. Every response is checked against the OpenAPI documents.
 */
import { randomUUID } from 'node:crypto';
import { ADMIN, EDGE_ENV, type TestSystem, gql as gqlAt, http, startTestSystem, strongPassword, uniqueEmail, userHolding } from './harness';

jest.setTimeout(120_000);

interface Person {
  readonly id: string;
  readonly token: string;
}

describe('edge profile against the commerce service (end to end)', () => {
  let sys: TestSystem;
  let admin: Person;
  let manager: Person;
  let alice: Person;
  let bob: Person;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const gql = (query: string, opts: { who?: Person; variables?: Record<string, unknown> } = {}) => gqlAt(sys.url(), query, { token: opts.who?.token, variables: opts.variables });

  async function customer(): Promise<Person> {
    const email = uniqueEmail('shop');
    const password = strongPassword();
    expect((await call('POST', '/api/v1/users', { token: admin.token, body: { firstName: 'Edge', lastName: 'Shopper', email, password } })).status).toBe(201);
    const login = await call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });
    return { id: login.json.user.id as string, token: login.json.token as string };
  }

  beforeAll(async () => {
    sys = await startTestSystem({ env: EDGE_ENV });
    const login = await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN });
    admin = { id: login.json.user.id as string, token: login.json.token as string };
    manager = await userHolding(sys.url(), admin.token, ['products.manage']);
    [alice, bob] = [await customer(), await customer()];
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const CREATE = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id sku name priceMinor } }';
  // Active products' names are unique (their lookalike keys): by default each its own, from its sku.
  async function newProduct(over: { onHand?: number; priceMinor?: number; name?: string } = {}): Promise<{ id: string; sku: string; name: string; priceMinor: number }> {
    const sku = `E-${randomUUID().slice(0, 8).toUpperCase()}`;
    const i = { sku, name: over.name ?? `Edge widget ${sku}`, description: 'A widget', priceMinor: over.priceMinor ?? 1_999, currency: 'EUR', onHand: over.onHand ?? 10 };
    const r = await gql(CREATE, { who: manager, variables: { i } });
    expect(r.errors).toBeUndefined();
    return r.data.createProduct;
  }
  const available = async (id: string): Promise<number> => (await call('GET', `/api/v1/products/${id}`)).json.product.available;
  /** Calls of `method` commerce's gRPC server has answered so far. */
  const served = async (method: string): Promise<number> =>
    (await sys.commerce.metrics.grpcServerDuration.get()).values.filter((v) => v.metricName?.endsWith('_count') && v.labels.grpc_method === method).reduce((n, v) => n + v.value, 0);

  it('REST: a listed product has exactly the documented fields; one product → 200 {product}, not no-store; a page token commerce cannot read → 400 naming the query field', async () => {
    const p = await newProduct({ priceMinor: 4_200, onHand: 3 });
    const list = await call('GET', `/api/v1/products?q=${encodeURIComponent(p.name)}`);
    expect(list.json.products.map((x: Record<string, unknown>) => Object.keys(x).sort())).toEqual([['available', 'currency', 'description', 'id', 'name', 'priceMinor', 'sku', 'status']]);
    const one = await call('GET', `/api/v1/products/${p.id}`);
    expect(one.json).toEqual({ product: { id: p.id, sku: p.sku, name: p.name, description: 'A widget', priceMinor: 4_200, currency: 'EUR', status: 'ACTIVE', available: 3 } });
    expect(one.headers.get('cache-control')).toBeNull();
    const bad = await call('GET', '/api/v1/products?page_token=not-a-token');
    expect({ status: bad.status, type: bad.headers.get('content-type'), field: bad.json.errors?.[0]?.field }).toEqual({ status: 400, type: 'application/problem+json', field: 'querystring.page_token' });
  });

  it('GraphQL: products are public and not no-store; an unknown id is null; pageSize: null means the default page', async () => {
    const p = await newProduct();
    const list = await gql('query($q: String) { products(q: $q, pageSize: 5, status: ACTIVE) { products { id sku priceMinor status available } nextPageToken } }', { variables: { q: p.name } });
    expect(list.data.products).toEqual({ products: [{ id: p.id, sku: p.sku, priceMinor: 1_999, status: 'ACTIVE', available: 10 }], nextPageToken: null });
    expect(list.headers.get('cache-control')).toBeNull();
    const one = await gql(`{ product(id: "${p.id}") { name } missing: product(id: "${randomUUID()}") { name } }`);
    expect(one.data).toEqual({ product: { name: p.name }, missing: null });
    // Found by the property tests: null is the default, not an internal error.
    for (const [q, who] of [['{ products(pageSize: null) { products { id } nextPageToken } }', undefined], ['{ orders(pageSize: null) { orders { id } nextPageToken } }', alice]] as const) {
      const r = await gql(q, { who });
      expect({ q, status: r.status, errors: r.errors }).toEqual({ q, status: 200, errors: undefined });
    }
    expect((await gql('query($n: Int) { products(pageSize: $n) { products { id } } }', { variables: { n: null } })).errors).toBeUndefined();
  });

  it('a cart of 30 lines and an order of 30 lines each cost ONE BatchGetProducts call', async () => {
    const shopper = await customer();
    const products = [];
    for (let i = 0; i < 30; i++) products.push(await newProduct({ priceMinor: 100 + i }));
    const lines = products.map((p) => ({ productId: p.id, quantity: 1 }));
    const set = await gql('mutation($lines: [CartLineInput!]!) { updateCart(lines: $lines) { lines { productId } subtotalMinor currency } }', { who: shopper, variables: { lines } });
    expect(set.errors).toBeUndefined();
    expect(set.headers.get('cache-control')).toBe('no-store');
    expect(set.data.updateCart).toMatchObject({ subtotalMinor: products.reduce((s, p) => s + p.priceMinor, 0), currency: 'EUR' });

    const calls = async <T>(run: () => Promise<T>): Promise<{ result: T; batches: number; gets: number }> => {
      const [batches, gets] = [await served('BatchGetProducts'), await served('GetProduct')];
      const result = await run();
      return { result, batches: (await served('BatchGetProducts')) - batches, gets: (await served('GetProduct')) - gets };
    };
    const cart = await calls(() => gql('{ cart { customerId lines { product { id } } } }', { who: shopper }));
    expect(cart.result.data.cart.customerId).toBe(shopper.id);
    expect(cart.result.data.cart.lines.map((l: { product: { id: string } }) => l.product.id)).toEqual(products.map((p) => p.id));
    expect({ batches: cart.batches, gets: cart.gets }).toEqual({ batches: 1, gets: 0 });

    const placed = await gql('mutation { checkout(input: {idempotencyKey: "thirty"}) { id lines { productId } } }', { who: shopper });
    expect(placed.data.checkout.lines).toHaveLength(30);
    const orders = await calls(() => gql('{ orders(pageSize: 10) { orders { id lines { quantity unitPriceMinor sku name product { id available } } } } }', { who: shopper }));
    expect(orders.result.data.orders.orders[0].lines).toHaveLength(30);
    expect(orders.result.data.orders.orders[0].lines[0].product.available).toBe(9);
    expect(orders.batches).toBe(1);
    // Aliased product(id) fields share the batch too.
    const [a, b] = [products[0]!.id, products[1]!.id];
    const aliased = await calls(() => gql(`{ a: product(id: "${a}") { id } b: product(id: "${b}") { id } c: product(id: "${a}") { id } }`));
    expect(aliased.result.data).toEqual({ a: { id: a }, b: { id: b }, c: { id: a } });
    expect({ batches: aliased.batches, gets: aliased.gets }).toEqual({ batches: 1, gets: 0 });
  });

  it('checkout: refusals by code with their field, idempotent replays, createOrder alias, cancel once, archived products unavailable', async () => {
    const p = await newProduct({ onHand: 3, priceMinor: 2_500 });
    const short = await gql(`mutation { checkout(input: {idempotencyKey: "s", lines: [{productId: "${p.id}", quantity: 4}]}) { id } }`, { who: bob });
    expect(short).toMatchObject({ status: 200, data: null, codes: ['INSUFFICIENT_STOCK'] });
    expect(short.errors![0]!.extensions.errors).toEqual([{ field: 'lines[0].quantity', message: expect.any(String) }]);
    expect(short.errors![0]!.path).toEqual(['checkout']);

    const ORDER = `mutation($k: String!, $q: Int!) { createOrder(input: {idempotencyKey: $k, lines: [{productId: "${p.id}", quantity: $q}]}) { id customerId status totalMinor currency createdAt lines { unitPriceMinor quantity } } }`;
    const first = await gql(ORDER, { who: bob, variables: { k: `once-${p.id}`, q: 2 } });
    expect(first.data.createOrder).toMatchObject({ customerId: bob.id, status: 'CONFIRMED', totalMinor: 5_000, currency: 'EUR', lines: [{ unitPriceMinor: 2_500, quantity: 2 }] });
    expect(first.data.createOrder.createdAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect((await gql(ORDER, { who: bob, variables: { k: `once-${p.id}`, q: 2 } })).data.createOrder.id).toBe(first.data.createOrder.id);
    expect((await gql(ORDER, { who: bob, variables: { k: `once-${p.id}`, q: 1 } })).codes).toEqual(['IDEMPOTENCY_CONFLICT']);
    expect(await available(p.id)).toBe(1);

    const id = first.data.createOrder.id as string;
    const mine = await gql('{ orders(status: CONFIRMED) { orders { id customerId } } }', { who: alice });
    expect(mine.data.orders.orders.every((o: { customerId: string }) => o.customerId === alice.id)).toBe(true);
    const cancel = `mutation { cancelOrder(id: "${id}") { id status } }`;
    expect((await gql(cancel, { who: bob })).data.cancelOrder).toEqual({ id, status: 'CANCELLED' });
    expect((await gql(cancel, { who: bob })).data.cancelOrder).toEqual({ id, status: 'CANCELLED' });
    expect(await available(p.id)).toBe(3);

    expect((await gql(`mutation { archiveProduct(id: "${p.id}") { status } }`, { who: manager })).data.archiveProduct).toEqual({ status: 'ARCHIVED' });
    const gone = await gql(`mutation { checkout(input: {idempotencyKey: "g", lines: [{productId: "${p.id}", quantity: 1}]}) { id } }`, { who: bob });
    expect(gone.codes).toEqual(['PRODUCT_UNAVAILABLE']);
    expect((await gql(`mutation { updateCart(lines: [{productId: "${p.id}", quantity: 1}]) { currency } }`, { who: bob })).codes).toEqual(['PRODUCT_UNAVAILABLE']);
    expect((await gql(`mutation { updateCart(lines: [{productId: "${randomUUID()}", quantity: 0}]) { currency } }`, { who: bob })).codes).toEqual(['BAD_USER_INPUT']);
  });

  it('product administration: a duplicate sku is refused, the stock detail is for administrators, stock never goes below reserved; update and archive', async () => {
    const CREATE_BIG = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id sku status priceMinor stock { onHand reserved available } } }';
    const sku = `M-${randomUUID().slice(0, 8).toUpperCase()}`;
    const input = { i: { sku, name: `Managed ${sku}`, priceMinor: 100_000_000_000, currency: 'USD', onHand: 5 } };
    const made = await gql(CREATE_BIG, { who: manager, variables: input });
    expect(made.data.createProduct).toMatchObject({ sku, status: 'ACTIVE', priceMinor: 100_000_000_000, stock: { onHand: 5, reserved: 0, available: 5 } });
    const id = made.data.createProduct.id as string;
    expect((await gql(CREATE_BIG, { who: admin, variables: input })).codes).toEqual(['BAD_USER_INPUT']);

    expect((await gql(`{ product(id: "${id}") { name stock { onHand } } }`, { who: alice })).codes).toEqual(['FORBIDDEN']);
    expect((await gql(`{ product(id: "${id}") { name available } }`)).data.product).toEqual({ name: `Managed ${sku}`, available: 5 });

    await gql(`mutation { checkout(input: {idempotencyKey: "adm-${id}", lines: [{productId: "${id}", quantity: 2}]}) { id } }`, { who: alice });
    const ADJUST = `mutation($i: AdjustStockInput!) { adjustStock(id: "${id}", input: $i) { stock { onHand reserved available } } }`;
    expect((await gql(ADJUST, { who: admin, variables: { i: { setOnHand: 1 } } })).codes).toEqual(['INSUFFICIENT_STOCK']);
    expect((await gql(ADJUST, { who: admin, variables: { i: { delta: -4 } } })).codes).toEqual(['INSUFFICIENT_STOCK']);
    expect((await gql(ADJUST, { who: admin, variables: { i: { delta: 1, setOnHand: 9 } } })).codes).toEqual(['BAD_USER_INPUT']);
    expect((await gql(ADJUST, { who: alice, variables: { i: { delta: 1 } } })).codes).toEqual(['FORBIDDEN']);
    expect((await gql(ADJUST, { who: manager, variables: { i: { delta: -3 } } })).data.adjustStock.stock).toEqual({ onHand: 2, reserved: 2, available: 0 });

    const updated = await gql(`mutation { updateProduct(id: "${id}", input: {name: "Renamed ${sku}", priceMinor: 150}) { name priceMinor sku } }`, { who: manager });
    expect(updated.data.updateProduct).toEqual({ name: `Renamed ${sku}`, priceMinor: 150, sku });
    expect((await gql(`mutation { archiveProduct(id: "${id}") { status } }`, { who: manager })).data.archiveProduct).toEqual({ status: 'ARCHIVED' });
    expect((await gql(`mutation { archiveProduct(id: "${randomUUID()}") { status } }`, { who: manager })).codes).toEqual(['NOT_FOUND']);
  });
});
