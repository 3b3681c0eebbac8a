/**
 * The OAuth clients API end to end (DESIGN §5 "Clients", §3): through the gateway with real
 * tokens, the registry read back as the OpenID provider reads it (ClientLookup over identity's
 * database). clients.manage decides who gets in; escalation binds what they may give; a secret
 * is shown once and a rotation ends the old one at once; a deleted client's subject is revoked
 * at the gateway (a service account's token, sub = client id, stops within a second).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { PgClientStore, builtInClients } from '@iam/identity';
import { open } from '@iam/platform';
import { eventually } from '@iam/platform/testing';
import { type JWK, SignJWT, importJWK } from 'jose';
import { ADMIN, type TestSystem, http, startTestSystem, userHolding } from './harness';

jest.setTimeout(120_000);

describe('OAuth clients API (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  let lookup: PgClientStore;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const app = (over: Record<string, unknown> = {}) => ({
    name: `App ${randomUUID().slice(0, 8)}`,
    type: 'confidential',
    redirectUris: ['https://app.example/cb', 'http://127.0.0.1:8400/cb'],
    postLogoutRedirectUris: ['https://app.example/'],
    grantTypes: ['authorization_code', 'refresh_token'],
    ...over,
  });
  const problem = (r: { status: number; headers: Headers; json: { traceId?: string } }, status: number) => {
    expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({ status, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  };
  const count = async () => Number((await sys.identity.dataSource.query<Array<{ n: string }>>('SELECT count(*) AS n FROM oauth_clients'))[0]!.n);

  beforeAll(async () => {
    sys = await startTestSystem();
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    lookup = new PgClientStore(sys.identity.dataSource.manager, builtInClients('http://localhost:8080'));
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('403 without clients.manage, 401 without a token; every answer no-store', async () => {
    const other = await userHolding(sys.url(), admin, ['users.manage']);
    for (const [method, path] of [['GET', '/api/v1/clients'], ['POST', '/api/v1/clients'], ['GET', '/api/v1/clients/iam-console'], ['DELETE', `/api/v1/clients/${randomUUID()}`], ['POST', `/api/v1/clients/${randomUUID()}/secret`]] as const) {
      const r = await call(method, path, { token: other.token, body: method === 'POST' && !path.endsWith('secret') ? app() : undefined });
      problem(r, 403);
      problem(await call(method, path), 401);
    }
    const listed = await call('GET', '/api/v1/clients', { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('cache-control')).toBe('no-store');
  });

  it('the built-in iam-console is listed first and read only (409)', async () => {
    const r = await call('GET', '/api/v1/clients?pageSize=1', { token: admin });
    expect(r.json).toMatchObject({ page: 1, pageSize: 1, totalPages: r.json.totalCount, totalCountExact: true });
    expect(r.json.items[0]).toMatchObject({ clientId: 'iam-console', type: 'public', builtIn: true, firstParty: true, grantTypes: ['authorization_code', 'refresh_token'] });
    expect((await call('GET', '/api/v1/clients/iam-console', { token: admin })).json.clientId).toBe('iam-console');
    expect((await call('GET', '/api/v1/clients?id=iam-console', { token: admin })).json.clientId).toBe('iam-console');
    problem(await call('PUT', '/api/v1/clients/iam-console', { token: admin, body: { name: 'Mine' } }), 409);
    problem(await call('DELETE', '/api/v1/clients/iam-console', { token: admin }), 409);
    problem(await call('POST', '/api/v1/clients/iam-console/secret', { token: admin }), 409);
    expect(await lookup.find('iam-console')).toMatchObject({ builtIn: true });
  });

  it('create: 201 with Location and the secret once; reads never show it; only its hash is stored', async () => {
    const r = await call('POST', '/api/v1/clients', { token: admin, body: app({ requirePar: true, dpopBound: true }) });
    expect(r.status).toBe(201);
    const { clientId, clientSecret } = r.json as { clientId: string; clientSecret: string };
    expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.headers.get('location')).toBe(`/api/v1/clients/${clientId}`);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json).toMatchObject({ type: 'confidential', requirePar: true, dpopBound: true, builtIn: false, firstParty: false, roles: [], deletedAt: null });
    const read = await call('GET', `/api/v1/clients/${clientId}`, { token: admin });
    expect(read.json.clientSecret).toBeUndefined();
    expect(read.text).not.toContain(clientSecret);
    expect((await call('GET', `/api/v1/clients?q=${encodeURIComponent(r.json.name)}`, { token: admin })).json).toMatchObject({ totalCount: 1, items: [{ clientId }] });
    const [row] = await sys.identity.dataSource.query<Array<{ secret_hash: Buffer }>>('SELECT secret_hash FROM oauth_clients WHERE client_id = $1', [clientId]);
    expect(row!.secret_hash.toString('latin1')).not.toContain(clientSecret);
    expect(await lookup.verifySecret(clientId, clientSecret)).toBe(true);
    // A public client has no secret.
    const pub = await call('POST', '/api/v1/clients', { token: admin, body: app({ type: 'public' }) });
    expect(pub.status).toBe(201);
    expect(pub.json.clientSecret).toBeUndefined();
    problem(await call('POST', `/api/v1/clients/${pub.json.clientId}/secret`, { token: admin }), 409);
  });

  it('validation: 400 naming the field, nothing written', async () => {
    const before = await count();
    const cases: Array<[Record<string, unknown>, string]> = [
      [app({ name: '' }), 'body.name'],
      [app({ name: 'x'.repeat(101) }), 'body.name'],
      [app({ type: 'secret' }), 'body.type'],
      [app({ redirectUris: ['/relative'] }), 'body.redirectUris[0]'],
      [app({ redirectUris: ['https://app.example/cb#frag'] }), 'body.redirectUris[0]'],
      [app({ redirectUris: ['http://app.example/cb'] }), 'body.redirectUris[0]'],
      [app({ redirectUris: ['ftp://app.example/cb'] }), 'body.redirectUris[0]'],
      [app({ postLogoutRedirectUris: ['http://evil.example/'] }), 'body.postLogoutRedirectUris[0]'],
      [app({ grantTypes: [] }), 'body.grantTypes'],
      [app({ grantTypes: ['password'] }), 'body.grantTypes.0'],
      [app({ grantTypes: ['implicit'] }), 'body.grantTypes.0'],
      [app({ type: 'public', grantTypes: ['client_credentials'], redirectUris: [] }), 'body.grantTypes'],
      [app({ redirectUris: [] }), 'body.redirectUris'],
      [app({ roles: ['Administrator'] }), 'body.roles'],
      [app({ grantTypes: ['client_credentials'], redirectUris: [], roles: [`no-such-role-${randomUUID()}`] }), 'body.roles'],
      [{ ...app(), clientId: 'mine' }, 'body.clientId'],
      [{ ...app(), clientSecret: 'mine' }, 'body.clientSecret'],
    ];
    for (const [body, field] of cases) {
      const r = await call('POST', '/api/v1/clients', { token: admin, body });
      problem(r, 400);
      expect({ body, fields: (r.json.errors as Array<{ field: string }>).map((e) => e.field) }).toEqual({ body, fields: expect.arrayContaining([field]) });
    }
    // Loopback http is allowed.
    for (const uri of ['http://localhost:3000/cb', 'http://127.0.0.1/cb', 'http://[::1]:9/cb']) {
      expect((await call('POST', '/api/v1/clients', { token: admin, body: app({ type: 'public', redirectUris: [uri] }) })).status).toBe(201);
    }
    expect(await count()).toBe(before + 3);
    // Paging and unknown parameters.
    for (const q of ['page=0', 'pageSize=101', 'pageSize=x', 'page_size=5', 'cursorx=1', 'id=a%20b']) problem(await call('GET', `/api/v1/clients?${q}`, { token: admin }), 400);
    problem(await call('GET', `/api/v1/clients/${randomUUID()}`, { token: admin }), 404);
    problem(await call('PUT', `/api/v1/clients/${randomUUID()}`, { token: admin, body: { name: 'x' } }), 404);
  });

  it('escalation: a non-Administrator gives only roles whose every permission it holds, never Administrator', async () => {
    const manager = await userHolding(sys.url(), admin, ['clients.manage', 'users.manage']);
    const small = await userHolding(sys.url(), admin, ['users.manage']);
    const big = await userHolding(sys.url(), admin, ['users.manage', 'roles.manage']);
    const sa = (roles: string[]) => app({ grantTypes: ['client_credentials'], redirectUris: [], postLogoutRedirectUris: [], roles });
    const before = await count();
    problem(await call('POST', '/api/v1/clients', { token: manager.token, body: sa(['Administrator']) }), 403);
    problem(await call('POST', '/api/v1/clients', { token: manager.token, body: sa([big.roleName]) }), 403);
    expect(await count()).toBe(before);
    const ok = await call('POST', '/api/v1/clients', { token: manager.token, body: sa([small.roleName]) });
    expect(ok.status).toBe(201);
    expect(ok.json.roles).toEqual([small.roleName]);
    // Nor through an update, nor acting on a client with more powers than the caller.
    problem(await call('PUT', `/api/v1/clients/${ok.json.clientId}`, { token: manager.token, body: { roles: [big.roleName] } }), 403);
    const strong = await call('POST', '/api/v1/clients', { token: admin, body: sa([big.roleName]) });
    expect(strong.status).toBe(201);
    problem(await call('POST', `/api/v1/clients/${strong.json.clientId}/secret`, { token: manager.token }), 403);
    problem(await call('DELETE', `/api/v1/clients/${strong.json.clientId}`, { token: manager.token }), 403);
    expect(await lookup.verifySecret(strong.json.clientId, strong.json.clientSecret)).toBe(true);
    // An Administrator may give Administrator.
    expect((await call('POST', '/api/v1/clients', { token: admin, body: sa(['Administrator']) })).status).toBe(201);
  });

  it('update: fields given replace, absent stay; made public loses its secret', async () => {
    const made = (await call('POST', '/api/v1/clients', { token: admin, body: app() })).json;
    const r = await call('PUT', `/api/v1/clients/${made.clientId}`, { token: admin, body: { name: 'Renamed', redirectUris: ['https://b.example/cb'] } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'Renamed', redirectUris: ['https://b.example/cb'], postLogoutRedirectUris: made.postLogoutRedirectUris, type: 'confidential' });
    expect(r.json.clientSecret).toBeUndefined();
    problem(await call('PUT', `/api/v1/clients/${made.clientId}`, { token: admin, body: { redirectUris: [] } }), 400);
    const pub = await call('PUT', `/api/v1/clients/${made.clientId}`, { token: admin, body: { type: 'public' } });
    expect(pub.json.type).toBe('public');
    expect(await lookup.verifySecret(made.clientId, made.clientSecret)).toBe(false);
    const back = await call('PUT', `/api/v1/clients/${made.clientId}`, { token: admin, body: { type: 'confidential' } });
    expect(back.json.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await lookup.verifySecret(made.clientId, back.json.clientSecret)).toBe(true);
  });

  it('rotate: a new secret once, the old one stops at once', async () => {
    const made = (await call('POST', '/api/v1/clients', { token: admin, body: app() })).json;
    const r = await call('POST', `/api/v1/clients/${made.clientId}/secret`, { token: admin });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.json.clientSecret).not.toBe(made.clientSecret);
    expect(await lookup.verifySecret(made.clientId, made.clientSecret)).toBe(false);
    expect(await lookup.verifySecret(made.clientId, r.json.clientSecret)).toBe(true);
  });

  it('delete: 204, then 404; the client is gone for the provider, identity.client.deleted published, its subject revoked at the gateway', async () => {
    const made = (await call('POST', '/api/v1/clients', { token: admin, body: app({ grantTypes: ['client_credentials'], redirectUris: [], postLogoutRedirectUris: [] }) })).json;
    // A service account's token (sub = the client id), signed with identity's current key of JWT_ALG.
    const [key] = await sys.identity.dataSource.query<Array<{ kid: string; private_key: Buffer }>>("SELECT kid, private_key FROM signing_keys WHERE alg = 'EdDSA' ORDER BY activates_at LIMIT 1");
    const jwk = JSON.parse(open(sys.kek, key!.private_key, key!.kid).toString('utf8')) as JWK;
    const now = Math.floor(Date.now() / 1000) - 2;
    // The issuer REST tokens carry (PUBLIC_URL's by default), read off the administrator's token.
    const iss = (JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString('utf8')) as { iss: string }).iss;
    const token = await new SignJWT({ sub: made.clientId, email: '', jti: randomUUID(), roles: [], permissions: ['clients.manage'], iss, aud: 'iam-api', iat: now, nbf: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'EdDSA', kid: key!.kid })
      .sign(await importJWK(jwk, 'EdDSA'));
    expect((await call('GET', '/api/v1/clients?pageSize=1', { token })).status).toBe(200);

    expect((await call('DELETE', `/api/v1/clients/${made.clientId}`, { token: admin })).status).toBe(204);
    const deletedAt = Date.now();
    await eventually(async () => (await call('GET', '/api/v1/clients?pageSize=1', { token })).status === 401, 5_000, 50);
    expect(Date.now() - deletedAt).toBeLessThan(1_500);
    problem(await call('DELETE', `/api/v1/clients/${made.clientId}`, { token: admin }), 404);
    problem(await call('GET', `/api/v1/clients/${made.clientId}`, { token: admin }), 404);
    expect((await call('GET', `/api/v1/clients?id=${made.clientId}&includeDeleted=true`, { token: admin })).json).toMatchObject({ clientId: made.clientId, deletedAt: expect.any(String) });
    expect(await lookup.find(made.clientId)).toBeNull();
    expect(await lookup.verifySecret(made.clientId, made.clientSecret)).toBe(false);
    const events = await sys.identity.dataSource.query<Array<{ subject: string }>>(
      `SELECT subject FROM outbox_events WHERE subject = ANY($1) ORDER BY occurred_at`,
      [[SUBJECTS.clientDeleted, SUBJECTS.subjectRevoked]],
    );
    expect(events.map((e) => e.subject)).toEqual(expect.arrayContaining([SUBJECTS.clientDeleted, SUBJECTS.subjectRevoked]));
  });

  it('audit: created, changed (before/after, never the secret), rotated and deleted, with the actor', async () => {
    const made = (await call('POST', '/api/v1/clients', { token: admin, body: app() })).json;
    await call('PUT', `/api/v1/clients/${made.clientId}`, { token: admin, body: { name: 'Audited' } });
    const rotated = (await call('POST', `/api/v1/clients/${made.clientId}/secret`, { token: admin })).json;
    await call('DELETE', `/api/v1/clients/${made.clientId}`, { token: admin });
    const trail = await eventually(async () => {
      const r = await call('GET', `/api/v1/audit-events?targetId=${made.clientId}`, { token: admin });
      return r.json.items.length >= 5 ? r : undefined;
    }, 10_000, 100);
    const items = trail.json.items as Array<{ action: string; actor: { type: string; id: string | null }; changes: Array<{ field: string; before?: unknown; after?: unknown; redacted?: boolean }> }>;
    expect(items.map((i) => i.action).sort()).toEqual(['client.created', 'client.deleted', 'client.secret.rotated', 'client.updated', 'sessions.revoked']);
    expect(items.every((i) => i.actor.type === 'user' && i.actor.id)).toBe(true);
    expect(items.find((i) => i.action === 'client.updated')!.changes).toEqual([{ field: 'name', before: made.name, after: 'Audited' }]);
    // A rotation ends the grants users gave the client (none here).
    expect(items.find((i) => i.action === 'client.secret.rotated')!.changes).toEqual([{ field: 'clientSecret', redacted: true }, { field: 'grantsRevoked', after: 0 }]);
    expect(trail.text).not.toContain(made.clientSecret);
    expect(trail.text).not.toContain(rotated.clientSecret);
  });
});
