/**
 * Every cursor and page token a client can send (issue #20, item 4), on every paged route:
 * arbitrary strings, and well-formed encodings of values outside their type's range (the audit
 * cursor `a2.<µs>.<seq>` with any 64-bit or larger numbers; the commerce page token's JSON with any
 * digits and ids) → 200 or a 400 problem+json with a trace id (GraphQL: a BAD_USER_INPUT error),
 * never a 5xx. Each route's own cursor from a real page still works.
 */
import fc from 'fast-check';
import { ADMIN, type TestSystem, startTestSystem } from './harness';

jest.setTimeout(240_000);

const GRAPHQL = '/api/v1/graphql';
const RUNS = { numRuns: 150, seed: Number(process.env.FC_SEED ?? 20) };

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
/** Integers of every size: small, around the 53-, 63- and 64-bit limits, and beyond. */
const anyInt = fc.oneof(
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.constantFrom(0n, -1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 63n, -(2n ** 63n), 2n ** 64n, 10n ** 19n - 1n, 10n ** 16n - 1n, 253402300800000000n, -62135596800000001n),
  fc.bigInt({ min: 2n ** 60n, max: 2n ** 64n }),
);
const digits = fc.oneof(
  anyInt.map(String),
  fc.stringMatching(/^[0-9]{1,25}$/),
  fc.constantFrom('', '-', '00', '1e10', '0x10', ' 1', '1.5', 'NaN', 'Infinity'),
);
/** The shapes of the two encodings this API gives out, filled with anything. */
const auditCursor = fc.tuple(fc.constantFrom('a2', 'a1', 'a3', ''), digits, digits).map(([v, us, seq]) => b64(`${v}.${us}.${seq}`));
const pageToken = fc
  .record({ t: fc.oneof(digits, fc.integer().map(Number), fc.double(), fc.constant(null)), i: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }), fc.integer()) })
  .map((o) => b64(JSON.stringify(o)));
/** Any string at all, with the characters a query string can carry (lone surrogates travel as U+FFFD). */
const anyString = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.base64String({ maxLength: 120 }),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,260}$/),
  fc.constantFrom('\u0000', '%00', 'a'.repeat(5_000), '..', '=', 'null'),
);

describe('cursors and page tokens: any value → 200 or 400, never a 5xx', () => {
  let sys: TestSystem;
  let admin: string;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge' } });
    const r = await fetch(`${sys.url()}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    admin = ((await r.json()) as { token: string }).token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function get(path: string, param: string, value: string): Promise<{ status: number; where: string }> {
    const qs = new URLSearchParams({ [param]: value }).toString();
    const res = await fetch(`${sys.url()}${path}?${qs}`, { headers: { authorization: `Bearer ${admin}` } });
    const text = await res.text();
    const where = `GET ${path}?${qs.slice(0, 200)} → ${res.status} ${text.slice(0, 300)}`;
    if (res.status !== 200 && res.status !== 400) throw new Error(`neither 200 nor 400: ${where}`);
    if (res.status === 400) {
      if (!(res.headers.get('content-type') ?? '').startsWith('application/problem+json')) throw new Error(`400 is not problem+json: ${where}`);
      const body = JSON.parse(text) as { status?: number; traceId?: string };
      if (body.status !== 400 || !/^[0-9a-f]{32}$/.test(body.traceId ?? '')) throw new Error(`problem without status or traceId: ${where}`);
    }
    return { status: res.status, where };
  }

  async function graphql(field: 'products' | 'orders', token: string): Promise<void> {
    const sel = field === 'products' ? 'products { id }' : 'orders { id }';
    const body = JSON.stringify({ query: `query($t: String) { ${field}(pageSize: 2, pageToken: $t) { ${sel} nextPageToken } }`, variables: { t: token } });
    const res = await fetch(`${sys.url()}${GRAPHQL}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body });
    const text = await res.text();
    const where = `${field}(pageToken: ${JSON.stringify(token).slice(0, 200)}) → ${res.status} ${text.slice(0, 300)}`;
    // 400: refused before execution (a string with control characters); 200: a resolver's answer.
    if (res.status !== 200 && res.status !== 400) throw new Error(`neither 200 nor 400: ${where}`);
    const answer = JSON.parse(text) as { errors?: Array<{ extensions?: { code?: string } }> };
    for (const e of answer.errors ?? []) if (e.extensions?.code !== 'BAD_USER_INPUT') throw new Error(`an error other than BAD_USER_INPUT: ${where}`);
  }

  it('the audit trail: GET /api/v1/audit-events?cursor=', async () => {
    await fc.assert(fc.asyncProperty(fc.oneof(auditCursor, anyString), async (c) => void (await get('/api/v1/audit-events', 'cursor', c))), RUNS);
    // The exact cursors of the report, and values at the edge of what a timestamp can hold.
    for (const text of ['a2.9223372036854775807.5', 'a2.-9223372036854775808.5', 'a2.9999999999999999999.1', 'a2.253402300800000000.1', 'a2.-62135596800000001.1', 'a2.0.9999999999999999', 'a2.1.0']) {
      const { status, where } = await get('/api/v1/audit-events', 'cursor', b64(text));
      expect([status, where]).toEqual([400, where]);
    }
    // A real cursor still pages.
    const first = (await (await fetch(`${sys.url()}/api/v1/audit-events?pageSize=1`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { nextCursor: string | null };
    if (first.nextCursor) expect((await get('/api/v1/audit-events', 'cursor', first.nextCursor)).status).toBe(200);
  });

  it('the audit trail: from and to, whatever the instant', async () => {
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    const instant = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 61 }), fc.constantFrom('Z', '+14:00', '-12:00', '.999999999Z', '+99:99')).map(
        ([y, mo, d, h, mi, z]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(mi, 2)}${z}`,
      ),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      anyString,
    );
    await fc.assert(fc.asyncProperty(fc.constantFrom('from', 'to'), instant, async (p, v) => void (await get('/api/v1/audit-events', p, v))), RUNS);
  });

  it('the public catalog: GET /api/v1/products?page_token=', async () => {
    await fc.assert(fc.asyncProperty(fc.oneof(pageToken, anyString), async (t) => void (await get('/api/v1/products', 'page_token', t))), RUNS);
    const first = (await (await fetch(`${sys.url()}/api/v1/products?page_size=1`)).json()) as { nextPageToken: string | null };
    if (first.nextPageToken) expect((await get('/api/v1/products', 'page_token', first.nextPageToken)).status).toBe(200);
  });

  it('GraphQL: products(pageToken) and orders(pageToken)', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom<'products' | 'orders'>('products', 'orders'), fc.oneof(pageToken, anyString), graphql), RUNS);
  });

  it('the Full collections: GET ?cursor= (any string, and the state of a real cursor edited) → 200 or 400; a real one pages', async () => {
    const paths = ['/api/v1/users', '/api/v1/roles', '/api/v1/permissions', '/api/v1/role-permissions'];
    // Cursors shaped like the directory's (base64url JSON "." 22 characters), their state anything.
    const shaped = fc
      .tuple(fc.jsonValue(), fc.stringMatching(/^[A-Za-z0-9_-]{22}$/))
      .map(([state, check]) => `${b64(JSON.stringify(state))}.${check}`);
    await fc.assert(fc.asyncProperty(fc.constantFrom(...paths), fc.oneof(shaped, anyString), async (path, c) => void (await get(path, 'cursor', c))), RUNS);
    for (const path of paths) {
      const first = (await (await fetch(`${sys.url()}${path}?pageSize=1`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { nextCursor: string | null };
      if (!first.nextCursor) continue;
      expect((await get(path, 'cursor', first.nextCursor)).status).toBe(200);
      const [body, check] = first.nextCursor.split('.') as [string, string];
      const state = JSON.parse(Buffer.from(body, 'base64url').toString()) as unknown[];
      // The same state with its numbers out of range, re-encoded (the check then fails too): 400.
      for (const edit of [[3, 2 ** 53], [3, -1], [4, 1e300], [5, 2]] as const) {
        const changed = [...state];
        changed[edit[0]] = edit[1];
        expect((await get(path, 'cursor', `${b64(JSON.stringify(changed))}.${check}`)).status).toBe(400);
      }
    }
  });

  it('the collections: page, pageSize (Full) and page, page_size (Compact), whatever the number', async () => {
    const number = fc.oneof(anyInt.map(String), digits, anyString);
    const routes: Array<[string, string]> = [
      ['/api/v1/users', 'page'],
      ['/api/v1/roles', 'pageSize'],
      ['/api/v1/permissions', 'page'],
      ['/api/v1/role-permissions', 'pageSize'],
      ['/api/v1/user', 'page_size'],
      ['/api/v1/role', 'page'],
      ['/api/v1/audit-events', 'pageSize'],
      ['/api/v1/products', 'page_size'],
    ];
    await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), number, async ([path, param], v) => void (await get(path, param, v))), RUNS);
  });
});
