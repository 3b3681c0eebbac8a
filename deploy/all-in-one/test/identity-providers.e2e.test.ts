/**
 * The identity providers API end to end (issue #40 item 1): identity-providers.manage decides who
 * gets in; the client secret is sealed at rest and never answered; default roles bind whoever sets
 * them (DESIGN §3); every change is audited with its actor, the secret only as a redacted field.
 */
import { randomUUID } from 'node:crypto';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem, userHolding } from './harness';

jest.setTimeout(120_000);

describe('identity providers API (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const oidc = (over: Record<string, unknown> = {}) => ({
    kind: 'oidc',
    name: `corp-${randomUUID().slice(0, 8)}`,
    displayName: 'Corporate SSO',
    discoveryUrl: 'https://login.example.com/.well-known/openid-configuration',
    clientId: 'iam-platform',
    clientSecret: 'upstream-secret-value',
    ...over,
  });
  const problem = (r: { status: number; headers: Headers; json: { traceId?: string } }, status: number) => {
    expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({ status, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  };

  beforeAll(async () => {
    sys = await startTestSystem();
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('403 without identity-providers.manage, 401 without a token', async () => {
    const other = await userHolding(sys.url(), admin, ['users.manage']);
    for (const [method, path] of [['GET', '/api/v1/identity-providers'], ['POST', '/api/v1/identity-providers'], ['DELETE', `/api/v1/identity-providers/${randomUUID()}`]] as const) {
      problem(await call(method, path, { token: other.token, body: method === 'POST' ? oidc() : undefined }), 403);
      problem(await call(method, path), 401);
    }
  });

  it('create: 201 with Location; the secret sealed at rest and never answered; defaults filled', async () => {
    const r = await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc() });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/api/v1/identity-providers/${r.json.id}`);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json).toMatchObject({ kind: 'oidc', hasClientSecret: true, trustEmailVerified: false, trustUpstreamMfa: false, allowSignUp: false, linking: 'verified-email', enabled: true, deletedAt: null });
    expect(r.json.claimMapping).toEqual({ subject: ['sub'], email: 'email', emailVerified: 'email_verified', givenName: 'given_name', familyName: 'family_name' });
    expect(JSON.stringify(r.json)).not.toContain('upstream-secret-value');
    const [row] = await sys.identity.dataSource.query<Array<{ sealed_client_secret: Buffer }>>('SELECT sealed_client_secret FROM identity_providers WHERE id = $1', [r.json.id]);
    expect(row!.sealed_client_secret.toString('latin1')).not.toContain('upstream-secret-value');
    const read = await call('GET', `/api/v1/identity-providers/${r.json.id}`, { token: admin });
    expect(read.json.clientSecret).toBeUndefined();
    expect((await call('GET', `/api/v1/identity-providers?id=${r.json.id}`, { token: admin })).json.id).toBe(r.json.id);
    const listed = await call('GET', `/api/v1/identity-providers?q=${r.json.name}`, { token: admin });
    expect(listed.json).toMatchObject({ totalCount: 1, items: [{ id: r.json.id }] });
  });

  it('presets: GitHub and Google need no discovery URL (and refuse one); Entra-style tid+oid mapping', async () => {
    const gh = await call('POST', '/api/v1/identity-providers', { token: admin, body: { kind: 'github', name: `gh-${randomUUID().slice(0, 6)}`, displayName: 'GitHub', clientId: 'Iv1.abc', clientSecret: 's' } });
    expect(gh.json).toMatchObject({ kind: 'github', discoveryUrl: null });
    problem(await call('POST', '/api/v1/identity-providers', { token: admin, body: { kind: 'google', name: 'g-x', displayName: 'Google', clientId: 'x', discoveryUrl: 'https://evil.example/.well-known/openid-configuration' } }), 400);
    const entra = await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc({ displayName: 'Entra ID', claimMapping: { subject: ['tid', 'oid'] } }) });
    expect(entra.json.claimMapping.subject).toEqual(['tid', 'oid']);
  });

  it('bad input: 400 naming the field; a taken name 409; unknown fields refused', async () => {
    const bad = await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc({ discoveryUrl: 'http://login.example.com/.well-known/openid-configuration' }) });
    problem(bad, 400);
    expect(bad.json.errors).toEqual([{ field: 'body.discoveryUrl', message: expect.stringContaining('https') }]);
    problem(await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc({ kind: 'saml' }) }), 400);
    problem(await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc({ hasClientSecret: true }) }), 400);
    problem(await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc({ defaultRoles: ['No Such Role'] }) }), 400);
    const first = await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc() });
    problem(await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc({ name: first.json.name }) }), 409);
  });

  it('default roles bind whoever sets them: a manager without users.manage cannot give a role that carries it, nor Administrator', async () => {
    const manager = await userHolding(sys.url(), admin, ['identity-providers.manage']);
    problem(await call('POST', '/api/v1/identity-providers', { token: manager.token, body: oidc({ defaultRoles: ['Administrator'] }) }), 403);
    const ok = await call('POST', '/api/v1/identity-providers', { token: manager.token, body: oidc() });
    expect(ok.status).toBe(201);
  });

  it('update: fields given replace; a new secret or its removal is a change; delete is soft and 404 after', async () => {
    const { json: p } = await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc() });
    const up = await call('PUT', `/api/v1/identity-providers/${p.id}`, { token: admin, body: { displayName: 'Okta', allowSignUp: true, trustEmailVerified: true, linking: 're-authenticate' } });
    expect(up.json).toMatchObject({ displayName: 'Okta', allowSignUp: true, trustEmailVerified: true, linking: 're-authenticate', hasClientSecret: true, name: p.name });
    expect((await call('PUT', `/api/v1/identity-providers/${p.id}`, { token: admin, body: { clientSecret: '' } })).json.hasClientSecret).toBe(false);
    expect((await call('DELETE', `/api/v1/identity-providers/${p.id}`, { token: admin })).status).toBe(204);
    problem(await call('DELETE', `/api/v1/identity-providers/${p.id}`, { token: admin }), 404);
    problem(await call('GET', `/api/v1/identity-providers/${p.id}`, { token: admin }), 404);
    expect((await call('GET', `/api/v1/identity-providers?id=${p.id}&includeDeleted=true`, { token: admin })).json.deletedAt).not.toBeNull();
  });

  it('audit: created, changed (before/after; the secret only redacted) and deleted, with the actor', async () => {
    const { json: p } = await call('POST', '/api/v1/identity-providers', { token: admin, body: oidc() });
    await call('PUT', `/api/v1/identity-providers/${p.id}`, { token: admin, body: { displayName: 'Audited', clientSecret: 'next-upstream-secret' } });
    await call('DELETE', `/api/v1/identity-providers/${p.id}`, { token: admin });
    const trail = await eventually(async () => {
      const r = await call('GET', `/api/v1/audit-events?targetId=${p.id}`, { token: admin });
      return r.json.items.length >= 3 ? r : undefined;
    }, 10_000, 100);
    const items = trail.json.items as Array<{ action: string; actor: { type: string; id: string | null }; changes: Array<{ field: string; before?: unknown; after?: unknown; redacted?: boolean }> }>;
    expect(items.map((i) => i.action).sort()).toEqual(['identity_provider.created', 'identity_provider.deleted', 'identity_provider.updated']);
    expect(items.every((i) => i.actor.type === 'user' && i.actor.id)).toBe(true);
    expect(items.find((i) => i.action === 'identity_provider.updated')!.changes).toEqual([{ field: 'displayName', before: 'Corporate SSO', after: 'Audited' }, { field: 'clientSecret', redacted: true }]);
    expect(trail.text).not.toContain('upstream-secret');
  });
});
