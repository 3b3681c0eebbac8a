/**
 * Signing in with an imported password against the real PostgreSQL, through the composition root
 * (the one password port identity calls): every family verifies, the first success rewrites the
 * stored hash to the platform's argon2id (a failure never does), the second sign-in still works;
 * and the lazy-migration hook: asked once, fail closed on a no, a 5xx or a timeout.
 */
import { type Server, createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { VECTORS } from '../infra/hashes/vectors';
import { passwordMetrics } from '../infra/password-metrics';
import { DirectoryFixture, directoryFixture, unique } from '../testing/app-fixture';

jest.setTimeout(60_000);

/** One cheap vector per family (the costly ones are verified in infra/hashes). */
const ONE_PER_FAMILY = [...new Map(VECTORS.filter((v) => !/rounds=(5[0-9]{5}|6[0-9]{5})|\$2a\$15|ln=16\b|m=65536/.test(v.hash)).map((v) => [v.family, v])).values()];

describe('sign-in with imported passwords', () => {
  const fx = directoryFixture('directory_app_legacy_signin');
  const hashOf = async (email: string) => (await fx.ds.query<Array<{ password_hash: string }>>('SELECT password_hash FROM users WHERE email = $1', [email]))[0]!.password_hash;

  it.each(ONE_PER_FAMILY.map((v) => [v.family, v.hash, v.password] as const))('%s: the first sign-in rehashes to argon2id, a wrong password first changes nothing', async (_family, hash, password) => {
    const email = `legacy-${unique()}@example.com`;
    const [r] = await fx.uc.imports.importBatch(fx.admin, randomUUID(), [{ line: 1, text: JSON.stringify({ firstName: 'Legacy', lastName: 'User', email, passwordHash: hash }) }]);
    expect(r).toMatchObject({ status: 'created' });
    expect((await fx.uc.credentials.verify(email, `${password}-wrong`)).principal).toBeNull();
    expect(await hashOf(email)).toBe(hash);
    expect((await fx.uc.credentials.verify(email, password)).principal).toMatchObject({ email });
    expect(await hashOf(email)).toMatch(/^\$argon2id\$v=19\$m=8192,t=1,p=1\$/);
    expect((await fx.uc.credentials.verify(email, password)).principal).toMatchObject({ email });
    expect((await fx.uc.credentials.verify(email, `${password}-wrong`)).principal).toBeNull();
  });

  it('the metric counts the legacy hashes left, by family, and a rehash takes one away', async () => {
    const registry = new Registry();
    const observe = passwordMetrics(registry, fx.ds);
    const count = async (family: string) => (await registry.getMetricsAsJSON()).find((m) => m.name === 'directory_legacy_password_hashes')?.values.find((v) => v.labels.family === family)?.value ?? 0;
    const email = `metric-${unique()}@example.com`;
    const before = await count('$P$');
    await fx.uc.imports.importBatch(fx.admin, randomUUID(), [{ line: 1, text: JSON.stringify({ firstName: 'Metric', lastName: 'User', email, passwordHash: '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' }) }]);
    expect(await count('$P$')).toBe(before + 1);
    expect((await fx.uc.credentials.verify(email, 'test12345')).principal).toMatchObject({ email });
    expect(await count('$P$')).toBe(before);
    observe('rehashed');
    expect((await registry.getMetricsAsJSON()).find((m) => m.name === 'directory_password_migrations_total')?.values).toEqual([{ labels: { event: 'rehashed' }, value: 1 }]);
  });

  it('a user imported with no password cannot sign in (until a reset), at the cost of a check', async () => {
    const email = `nopass-${unique()}@example.com`;
    await fx.uc.imports.importBatch(fx.admin, randomUUID(), [{ line: 1, text: JSON.stringify({ firstName: 'No', lastName: 'Password', email }) }]);
    expect(await fx.uc.credentials.verify(email, '')).toMatchObject({ principal: null, accountExists: true });
    expect(await fx.uc.credentials.verify(email, 'anything')).toMatchObject({ principal: null, accountExists: true });
  });
});

describe('lazy migration through the hook', () => {
  const SECRET = 's'.repeat(40);
  const calls: Array<{ auth: string | undefined; body: { email: string; password: string; externalId: string | null } }> = [];
  let answer: 'valid' | 'invalid' | 'error' | 'slow' = 'valid';
  let server: Server;
  let fx: DirectoryFixture;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        calls.push({ auth: req.headers.authorization, body: JSON.parse(body) as (typeof calls)[number]['body'] });
        if (answer === 'slow') return void setTimeout(() => res.end('{"valid":true}'), 3_500);
        if (answer === 'error') return void res.writeHead(503).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ valid: answer === 'valid' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
    fx = new DirectoryFixture('directory_app_migration_hook', { migrationHook: { url, secret: SECRET } });
    await fx.start();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const imported = async () => {
    const email = `hook-${unique()}@example.com`;
    const [r] = await fx.uc.imports.importBatch(fx.admin, randomUUID(), [{ line: 1, text: JSON.stringify({ firstName: 'Hook', lastName: 'User', email, externalId: `ext-${email}`, passwordMigration: 'hook' }) }]);
    expect(r).toMatchObject({ status: 'created' });
    return email;
  };
  const row = async (email: string) => (await fx.ds.query<Array<{ password_hash: string; password_migration: string | null }>>('SELECT password_hash, password_migration FROM users WHERE email = $1', [email]))[0]!;

  it('asks the legacy system once: the hash is stored on its yes and the hook never asked again', async () => {
    const email = await imported();
    calls.length = 0;
    answer = 'valid';
    expect((await fx.uc.credentials.verify(email, 'Legacy-Pass-1')).principal).toMatchObject({ email });
    expect(calls).toEqual([{ auth: `Bearer ${SECRET}`, body: { email, password: 'Legacy-Pass-1', externalId: `ext-${email}` } }]);
    expect(await row(email)).toEqual({ password_hash: expect.stringMatching(/^\$argon2id\$/), password_migration: null });
    answer = 'invalid';
    expect((await fx.uc.credentials.verify(email, 'Legacy-Pass-1')).principal).toMatchObject({ email });
    expect((await fx.uc.credentials.verify(email, 'Other-Pass-2')).principal).toBeNull();
    expect(calls).toHaveLength(1);
  });

  it.each([['invalid'], ['error'], ['slow']] as const)('fails closed on %s, counted against the account, and asks again next time', async (kind) => {
    const email = await imported();
    calls.length = 0;
    answer = kind;
    expect(await fx.uc.credentials.verify(email, 'Legacy-Pass-1')).toMatchObject({ principal: null, accountExists: true });
    expect(await row(email)).toEqual({ password_hash: '', password_migration: 'hook' });
    answer = 'valid';
    expect((await fx.uc.credentials.verify(email, 'Legacy-Pass-1')).principal).toMatchObject({ email });
    expect(calls).toHaveLength(2);
  }, 20_000);
});
