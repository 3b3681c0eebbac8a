/**
 * Property tests (issues #14, #26): for every route of the mounted profiles' OpenAPI documents (full,
 * compact and the edge BFF), random bodies, query strings, path parameters and headers (valid and
 * invalid, arbitrary Unicode among them: NUL, unpaired surrogates, 64 KiB strings, with and
 * without an administrator's token) → never a 5xx, every error is problem+json
 * with a trace id (a refused GraphQL document: a GraphQL response), and a failing request leaves
 * every table as it was (no half-written state). GraphQL gets documents of its own: random
 * selections of the schema's fields and arguments, random variables.
 */
import { edgeTypeDefs } from '@iam/gateway';
import fc from 'fast-check';
import { type GraphQLInputType, type GraphQLOutputType, buildSchema, getNullableType, isEnumType, isInputObjectType, isListType, isNonNullType, isObjectType, isScalarType } from 'graphql';
import { randomUUID } from 'node:crypto';
import { ADMIN, type TestSystem, startTestSystem } from './harness';

jest.setTimeout(240_000);

interface Operation {
  method: string;
  path: string;
  query: string[];
  body: string[];
}

const DIRECTORY_TABLES = ['users', 'roles', 'permissions', 'role_permissions', 'user_roles', 'password_resets', 'outbox_events'];
const IDENTITY_TABLES = ['refresh_tokens', 'revoked_access_tokens', 'revoked_subjects', 'email_action_tokens', 'email_action_requests', 'outbox_events'];
const COMMERCE_TABLES = ['products', 'stock', 'carts', 'cart_lines', 'orders', 'order_lines', 'idempotency_records', 'outbox_events'];
const GRAPHQL = '/api/v1/graphql';

describe('properties: random input to every route', () => {
  let sys: TestSystem;
  let admin: string;
  const operations: Operation[] = [];

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge' } });
    admin = await login();
    for (const profile of ['full', 'compact', 'edge']) {
      const doc = (await (await fetch(`${sys.url()}/docs/${profile}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>>;
      };
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
          operations.push({
            method: method.toUpperCase(),
            path,
            query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
            body: Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {}),
          });
        }
      }
    }
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function login(): Promise<string> {
    const r = await fetch(`${sys.url()}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    return ((await r.json()) as { token: string }).token;
  }

  /** Counts once the background work of earlier requests (request worker, event consumers) has settled. */
  async function settledCounts(): Promise<string> {
    let last = await counts();
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const now = await counts();
      if (now === last && !/"email_action_requests":"[1-9]/.test(now)) return now;
      last = now;
    }
    return last;
  }

  async function counts(): Promise<string> {
    const q = (tables: string[]) => tables.map((t) => `(SELECT count(*) FROM ${t}) AS ${t}`).join(', ');
    const [d] = await sys.directory.dataSource.query<unknown[]>(`SELECT ${q(DIRECTORY_TABLES)}`);
    const [i] = await sys.identity.dataSource.query<unknown[]>(`SELECT ${q(IDENTITY_TABLES)}`);
    const [c] = await sys.commerce.dataSource.query<unknown[]>(`SELECT ${q(COMMERCE_TABLES)}`);
    return JSON.stringify({ d, i, c });
  }

  const scalar = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.uuid(),
    fc.constantFrom('', ' ', '0', '-1', '1e309', 'true', 'null', '%00', '../..', 'a'.repeat(5_000), `${randomUUID()}@example.com`, 'Aa1!aaaaaaaaaaaa'),
    // Arbitrary Unicode (issue #26): NUL and other controls, unpaired surrogates, 64 KiB strings.
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.constantFrom('\u0000', `a\u0000@example.com`, '\ud800', 'a\udc00b', '\u001b[31m', '\u007f\u0085', 'x'.repeat(65_536), `${'é'.repeat(30_000)}\u0000`),
  );
  const value = fc.oneof({ depthSize: 'small' }, scalar, fc.jsonValue({ maxDepth: 3 }));

  const request = (op: Operation) =>
    fc.record({
      pathParam: fc.oneof(fc.uuid(), fc.string({ maxLength: 30 }), fc.constantFrom('00000000-0000-0000-0000-000000000000', '%2e%2e', 'x'.repeat(300))),
      query: fc.dictionary(
        fc.oneof(fc.constantFrom(...op.query, 'id', 'page', 'pageSize', 'page_size', 'q', 'includeDeleted'), fc.string({ maxLength: 10 })),
        fc.oneof(fc.string({ maxLength: 50 }), fc.integer().map(String), fc.string({ unit: 'binary', maxLength: 50 }), fc.constantFrom('\u0000', 'a\u0007b', 'x'.repeat(8_000))),
        { maxKeys: 4 },
      ),
      body: fc.oneof(
        fc.constant(undefined),
        fc.dictionary(fc.oneof(fc.constantFrom(...op.body, 'id', 'passwordHash', '__proto__', 'constructor'), fc.string({ maxLength: 10 })), value, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
        value.map((v) => JSON.stringify(v)),
        fc.string({ maxLength: 200 }),
      ),
      contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined),
      auth: fc.constantFrom<'admin' | 'none' | 'garbage' | 'malformed'>('admin', 'admin', 'none', 'garbage', 'malformed'),
      headers: fc.dictionary(fc.constantFrom('x-trace-id', 'traceparent', 'accept', 'x-forwarded-for', 'if-none-match', 'idempotency-key', 'accept-encoding'), fc.string({ maxLength: 80 }).filter((s) => /^[\t\x20-\x7e]*$/.test(s)), { maxKeys: 3 }),
    });

  function checkProblem(res: Response, text: string, where: string): void {
    if (!(res.headers.get('content-type') ?? '').startsWith('application/problem+json')) throw new Error(`not problem+json: ${where}`);
    const body = JSON.parse(text) as { status?: number; traceId?: string };
    if (body.status !== res.status || !/^[0-9a-f]{32}$/.test(body.traceId ?? '')) throw new Error(`problem without status/traceId: ${where}`);
  }

  /** GraphQL: a problem for a refused HTTP request, else a GraphQL response whose errors name no internal failure. */
  function checkGraphQLAnswer(res: Response, text: string, where: string): void {
    if ((res.headers.get('content-type') ?? '').startsWith('application/problem+json')) return checkProblem(res, text, where);
    if (res.status !== 200 && res.status !== 400) throw new Error(`GraphQL answered neither 200, 400 nor a problem: ${where}`);
    const body = JSON.parse(text) as { data?: unknown; errors?: Array<{ message?: string; extensions?: { code?: string } }> };
    if (res.status === 400 && (!Array.isArray(body.errors) || body.errors.length === 0)) throw new Error(`GraphQL 400 without errors: ${where}`);
    for (const e of body.errors ?? []) {
      if (typeof e.message !== 'string' || typeof e.extensions?.code !== 'string') throw new Error(`GraphQL error without message/code: ${where}`);
      if (e.extensions.code === 'INTERNAL_SERVER_ERROR') throw new Error(`GraphQL internal error: ${where}`);
    }
  }

  it('never a 5xx; errors are problem+json with a traceId; a failing request writes nothing', async () => {
    let requests = 0;
    const seen = new Map<number, number>();
    for (const op of operations) {
      // Revoking the administrator's own token would end the run's session: revoke gets throwaway tokens.
      const revoking = op.path.endsWith('/auth/revoke');
      await fc.assert(
        fc.asyncProperty(request(op), async (r) => {
          const path = op.path.replace(/\{[^}]+\}/g, encodeURIComponent(r.pathParam));
          const qs = new URLSearchParams(r.query).toString();
          const headers: Record<string, string> = { ...r.headers };
          if (r.contentType && r.body !== undefined) headers['content-type'] = r.contentType;
          if (r.auth === 'admin') headers.authorization = `Bearer ${revoking ? await login() : admin}`;
          if (r.auth === 'garbage') headers.authorization = `Bearer ${r.pathParam}`;
          if (r.auth === 'malformed') headers.authorization = r.pathParam;
          const before = await settledCounts();
          const res = await fetch(`${sys.url()}${path}${qs ? `?${qs}` : ''}`, { method: op.method, headers, body: op.method === 'GET' || op.method === 'DELETE' ? undefined : r.body });
          const text = await res.text();
          requests++;
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          const where = `${op.method} ${path}${qs ? `?${qs}` : ''} → ${res.status} ${text.slice(0, 300)}`;
          if (res.status >= 500) throw new Error(`5xx: ${where}`);
          if (op.path === GRAPHQL) checkGraphQLAnswer(res, text, where);
          else if (res.status >= 400) checkProblem(res, text, where);
          if (res.status >= 400) {
            const after = await counts();
            if (after !== before) throw new Error(`a failing request changed the database: ${where}\n  before ${before}\n  after  ${after}`);
          }
        }),
        // Fixed seed: a failure replays; FC_SEED explores others.
        { numRuns: 20, seed: Number(process.env.FC_SEED ?? 14) },
      );
    }
    process.stdout.write(`[properties] ${operations.length} operations, ${requests} requests, statuses ${JSON.stringify(Object.fromEntries(seen))}\n`);
    expect(requests).toBe(operations.length * 20);
  });
  it('GraphQL: random documents over the edge schema (fields, arguments, variables) → never a 5xx or an internal error; a refused mutation writes nothing', async () => {
    const schema = buildSchema(edgeTypeDefs);
    // Two real products among the ids, so some documents reach past "not found".
    const ids: string[] = [randomUUID(), 'not-an-id'];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${sys.url()}${GRAPHQL}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({ query: `mutation { createProduct(input: { sku: "PROP-${randomUUID().slice(0, 8)}", name: "P ${randomUUID().slice(0, 8)}", description: "", priceMinor: 100, currency: "EUR", stock: 5 }) { id } }` }),
      });
      const id = ((await res.json()) as { data?: { createProduct?: { id?: string } } }).data?.createProduct?.id;
      if (id) ids.push(id, id);
    }
    const str = (v: string) => JSON.stringify(v);
    const wrong = fc.oneof(
      fc.constant('null'),
      fc.integer().map(String),
      fc.constantFrom('2147483648', '9007199254740993', '-1', '0', '1.5', '1e400', 'true', '[]', '{}', 'ACTIVE', str(''), str('x'.repeat(300)), str('\u0000'), str('%00')),
      fc.string({ maxLength: 30 }).map(str),
    );
    const literal = (t: GraphQLInputType, depth: number): fc.Arbitrary<string> => {
      const n = getNullableType(t);
      let typed: fc.Arbitrary<string>;
      if (isListType(n)) typed = fc.array(literal(n.ofType, depth + 1), { maxLength: depth > 1 ? 1 : 4 }).map((xs) => `[${xs.join(', ')}]`);
      else if (isEnumType(n)) typed = fc.constantFrom(...n.getValues().map((v) => v.name));
      else if (isInputObjectType(n)) {
        const fields = Object.values(n.getFields());
        typed = fc
          .tuple(...fields.map((f) => fc.option(depth > 2 ? wrong : literal(f.type, depth + 1), { freq: isNonNullType(f.type) ? 30 : 3 })))
          .map((vs) => `{ ${vs.map((v, i) => (v === null ? '' : `${fields[i]!.name}: ${v}`)).filter(Boolean).join(', ')} }`);
      } else if (isScalarType(n) && n.name === 'ID') typed = fc.constantFrom(...ids).map(str);
      else if (isScalarType(n) && (n.name === 'Int' || n.name === 'SafeInt')) typed = fc.oneof(fc.integer({ min: -5, max: 1_001 }), fc.integer()).map(String);
      else if (isScalarType(n) && n.name === 'Boolean') typed = fc.boolean().map(String);
      else if (isScalarType(n) && n.name === 'DateTime') typed = fc.constantFrom(str(new Date().toISOString()), str('yesterday'));
      else typed = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('EUR', 'USD', 'eur', 'SKU-1', randomUUID())).map(str);
      return fc.oneof({ weight: 20, arbitrary: typed }, { weight: 1, arbitrary: wrong });
    };
    const selection = (t: GraphQLOutputType, depth: number): fc.Arbitrary<string> => {
      const n = getNullableType(t);
      const inner = isListType(n) ? getNullableType(n.ofType) : n;
      if (!isObjectType(inner)) return fc.constant('');
      const named = (x: GraphQLOutputType): GraphQLOutputType => {
        const y = getNullableType(x);
        return isListType(y) ? named(y.ofType) : y;
      };
      // Deeper than two levels only leaves (the edge's depth limit is tested on its own).
      const fields = Object.values(inner.getFields()).filter((f) => depth < 2 || !isObjectType(named(f.type)));
      return fc
        .subarray(fields, { minLength: 1, maxLength: Math.min(4, fields.length) })
        .chain((picked) => fc.tuple(...picked.map((f) => selection(f.type, depth + 1).map((sel) => `${f.name}${sel}`))))
        .map((parts) => ` { ${parts.join(' ')} }`);
    };
    const root = (kind: 'query' | 'mutation') => {
      const type = kind === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
      return fc.constantFrom(...Object.values(type.getFields())).chain((f) =>
        fc
          .tuple(
            fc.tuple(...f.args.map((a) => fc.option(literal(a.type, 0), { freq: isNonNullType(a.type) ? 30 : 2 }))),
            selection(f.type, 0),
          )
          .map(([args, sel]) => {
            const given = args.map((v, i) => (v === null ? '' : `${f.args[i]!.name}: ${v}`)).filter(Boolean);
            return `${kind} { ${f.name}${given.length ? `(${given.join(', ')})` : ''}${sel} }`;
          }),
      );
    };
    const document = fc.record({
      query: fc.oneof({ weight: 6, arbitrary: fc.oneof(root('query'), root('mutation')) }, { weight: 1, arbitrary: fc.string({ maxLength: 80 }) }),
      // Mostly absent (fc.option is null one time in freq): a wrong operation name refuses the whole document.
      variables: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) }),
      operationName: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }),
      auth: fc.constantFrom<'admin' | 'none'>('admin', 'admin', 'none'),
    });
    const seen = new Map<number, number>();
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(document, async (d) => {
        const before = await settledCounts();
        const body = JSON.stringify({ query: d.query, ...(d.variables ? { variables: d.variables } : {}), ...(d.operationName ? { operationName: d.operationName } : {}) });
        const res = await fetch(`${sys.url()}${GRAPHQL}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(d.auth === 'admin' ? { authorization: `Bearer ${admin}` } : {}) }, body });
        const text = await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        const where = `${body.slice(0, 400)} → ${res.status} ${text.slice(0, 300)}`;
        if (res.status >= 500) throw new Error(`5xx: ${where}`);
        checkGraphQLAnswer(res, text, where);
        const answer = res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as { errors?: Array<{ extensions?: { code?: string } }> }) : {};
        for (const e of answer.errors ?? []) codes.set(e.extensions?.code ?? '?', (codes.get(e.extensions?.code ?? '?') ?? 0) + 1);
        // One root field per document: an error means that field (the whole mutation) did nothing.
        if (res.status >= 400 || (answer.errors?.length ?? 0) > 0) {
          const after = await counts();
          if (after !== before) throw new Error(`a refused GraphQL request changed the database: ${where}\n  before ${before}\n  after  ${after}`);
        }
      }),
      { numRuns: 200, seed: Number(process.env.FC_SEED ?? 14) },
    );
    process.stdout.write(`[properties] GraphQL: 200 documents, statuses ${JSON.stringify(Object.fromEntries(seen))}, error codes ${JSON.stringify(Object.fromEntries(codes))}\n`);
  });
});
