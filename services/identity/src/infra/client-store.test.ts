import { randomBytes, randomUUID } from 'node:crypto';
import { createDataSource, migrate, sha256 } from '@iam/platform';
import { type TestDatabase, createTestDatabase, testLogger } from '@iam/platform/testing';
import type { DataSource } from 'typeorm';
import { CONSOLE_CLIENT_ID, type ClientSettings, type ClientStore, builtInClients } from '../domain/clients';
import { MemoryClientStore } from '../testing/memory-client-store';
import { PgClientStore } from './client-store';
import { entities, migrations } from './schema';

/**
 * The ClientStore contract, run against the PostgreSQL store and the in-memory fake
 * (src/testing/memory-client-store.ts). `make()` answers a store over an empty registry whose
 * built-ins are `builtInClients('http://localhost:8080/')`.
 */
const settings = (over: Partial<ClientSettings> = {}): ClientSettings => ({
  name: 'Billing',
  type: 'confidential',
  redirectUris: ['https://app.example/cb'],
  postLogoutRedirectUris: ['https://app.example/'],
  grantTypes: ['authorization_code', 'refresh_token'],
  roles: [],
  requirePar: true,
  dpopBound: false,
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
  ...over,
});

function describeClientStoreContract(name: string, make: () => Promise<ClientStore>): void {
  describe(`ClientStore contract: ${name}`, () => {
    let store: ClientStore;
    beforeEach(async () => {
      store = await make();
    });

    const create = async (over: Partial<ClientSettings> = {}, secret: string | null = randomBytes(32).toString('base64url')) => {
      const clientId = randomUUID();
      const record = await store.insert({ ...settings(over), clientId, firstParty: false, secretHash: secret === null ? null : sha256(secret) });
      return { clientId, record, secret };
    };

    it('the built-in console client is found, never by its secret, and listed first', async () => {
      const c = await store.find(CONSOLE_CLIENT_ID);
      expect(c).toMatchObject({
        clientId: 'iam-console',
        type: 'public',
        builtIn: true,
        firstParty: true,
        grantTypes: ['authorization_code', 'refresh_token'],
        redirectUris: ['http://localhost:8080/console/', 'http://localhost:8080/account'],
        postLogoutRedirectUris: ['http://localhost:8080/console/', 'http://localhost:8080/account'],
      });
      expect(await store.verifySecret(CONSOLE_CLIENT_ID, '')).toBe(false);
      await create();
      const page = await store.list({ page: 1, pageSize: 10, q: '', includeDeleted: false });
      expect(page.items.map((i) => i.clientId)[0]).toBe(CONSOLE_CLIENT_ID);
      expect(page.totalCount).toBe(2);
    });

    it('secretHash: the live confidential client\'s hash; null for public, built-in, deleted and unknown clients', async () => {
      const { clientId, secret } = await create();
      expect((await store.secretHash(clientId))?.equals(sha256(secret!))).toBe(true);
      const pub = await create({ type: 'public' }, null);
      expect(await store.secretHash(pub.clientId)).toBeNull();
      expect(await store.secretHash(CONSOLE_CLIENT_ID)).toBeNull();
      expect(await store.secretHash(randomUUID())).toBeNull();
      expect(await store.softDelete(clientId)).toBe(true);
      expect(await store.secretHash(clientId)).toBeNull();
    });

    it('insert and find: the settings round-trip; unknown ids are null', async () => {
      const { clientId, record } = await create({ roles: ['Auditor'], grantTypes: ['client_credentials'], redirectUris: [], dpopBound: true, apiPermissions: ['users.manage'] });
      expect(record).toMatchObject({ clientId, name: 'Billing', type: 'confidential', roles: ['Auditor'], grantTypes: ['client_credentials'], redirectUris: [], dpopBound: true, requirePar: true, apiPermissions: ['users.manage'], builtIn: false, firstParty: false, deletedAt: null, version: 1 });
      expect(await store.find(clientId)).toEqual(record);
      expect(await store.find(randomUUID())).toBeNull();
      expect(await store.find('not a uuid')).toBeNull();
    });

    it('verifySecret: the current secret of a live confidential client only', async () => {
      const { clientId, secret } = await create();
      expect(await store.verifySecret(clientId, secret!)).toBe(true);
      expect(await store.verifySecret(clientId, `${secret}x`)).toBe(false);
      expect(await store.verifySecret(clientId, '')).toBe(false);
      expect(await store.verifySecret(randomUUID(), secret!)).toBe(false);
      const pub = await create({ type: 'public' }, null);
      expect(await store.verifySecret(pub.clientId, '')).toBe(false);
    });

    it('setSecretHash: the old secret stops at once, the new one works; not for public clients', async () => {
      const { clientId, secret } = await create();
      const next = randomBytes(32).toString('base64url');
      expect(await store.setSecretHash(clientId, sha256(next))).toBe(true);
      expect(await store.verifySecret(clientId, secret!)).toBe(false);
      expect(await store.verifySecret(clientId, next)).toBe(true);
      expect((await store.get(clientId))!.version).toBe(2);
      const pub = await create({ type: 'public' }, null);
      expect(await store.setSecretHash(pub.clientId, sha256(next))).toBe(false);
      expect(await store.setSecretHash(CONSOLE_CLIENT_ID, sha256(next))).toBe(false);
    });

    it('update: replaces the settings at the expected version only', async () => {
      const { clientId, secret } = await create();
      const updated = await store.update(
        clientId,
        1,
        settings({ name: 'Billing 2', redirectUris: ['https://b.example/cb', 'http://127.0.0.1:9/cb'], apiPermissions: ['audit.read'], idTokenSignedResponseAlg: 'EdDSA', userinfoSignedResponseAlg: 'ES256', resourceServer: true }),
      );
      expect(updated).toMatchObject({
        name: 'Billing 2',
        redirectUris: ['https://b.example/cb', 'http://127.0.0.1:9/cb'],
        apiPermissions: ['audit.read'],
        idTokenSignedResponseAlg: 'EdDSA',
        userinfoSignedResponseAlg: 'ES256',
        resourceServer: true,
        version: 2,
      });
      expect(updated!.updatedAt.getTime()).toBeGreaterThanOrEqual(updated!.createdAt.getTime());
      expect(await store.update(clientId, 1, settings({ name: 'stale' }))).toBeNull();
      expect((await store.get(clientId))!.name).toBe('Billing 2');
      // The secret is kept unless one is given; null clears it (a client made public).
      expect(await store.verifySecret(clientId, secret!)).toBe(true);
      expect(await store.update(clientId, 2, { ...settings({ type: 'public' }), secretHash: null })).toMatchObject({ type: 'public', version: 3 });
      expect(await store.verifySecret(clientId, secret!)).toBe(false);
      expect(await store.update(CONSOLE_CLIENT_ID, 1, settings())).toBeNull();
    });

    it('softDelete: gone for find, verifySecret and update; kept with includeDeleted; a second delete is false', async () => {
      const { clientId, secret } = await create();
      expect(await store.softDelete(clientId)).toBe(true);
      expect(await store.softDelete(clientId)).toBe(false);
      expect(await store.find(clientId)).toBeNull();
      expect(await store.verifySecret(clientId, secret!)).toBe(false);
      expect(await store.update(clientId, 2, settings())).toBeNull();
      expect(await store.get(clientId, { includeDeleted: true })).toMatchObject({ clientId, deletedAt: expect.any(Date) });
      expect(await store.softDelete(CONSOLE_CLIENT_ID)).toBe(false);
      expect(await store.find(CONSOLE_CLIENT_ID)).not.toBeNull();
    });

    it('list: (createdAt, id) order behind the built-ins, pages, search, deleted only when asked', async () => {
      const a = await create({ name: 'Alpha app' });
      const b = await create({ name: 'Beta app' });
      const c = await create({ name: 'Gamma 100%_x' });
      await store.softDelete(b.clientId);
      const all = await store.list({ page: 1, pageSize: 100, q: '', includeDeleted: false });
      expect(all.items.map((i) => i.clientId)).toEqual([CONSOLE_CLIENT_ID, a.clientId, c.clientId]);
      expect(all).toMatchObject({ totalCount: 3, totalCountExact: true });
      const p2 = await store.list({ page: 2, pageSize: 2, q: '', includeDeleted: true });
      expect(p2.items.map((i) => i.clientId)).toEqual([b.clientId, c.clientId]);
      expect(p2.totalCount).toBe(4);
      expect((await store.list({ page: 1, pageSize: 1, q: '', includeDeleted: false })).items.map((i) => i.clientId)).toEqual([CONSOLE_CLIENT_ID]);
      expect((await store.list({ page: 9, pageSize: 2, q: '', includeDeleted: false })).items).toEqual([]);
      const found = await store.list({ page: 1, pageSize: 10, q: 'APP', includeDeleted: false });
      expect(found.items.map((i) => i.clientId)).toEqual([a.clientId]);
      expect(found.totalCount).toBe(1);
      // LIKE wildcards are text; the id is searchable too.
      expect((await store.list({ page: 1, pageSize: 10, q: '0%_', includeDeleted: false })).items.map((i) => i.clientId)).toEqual([c.clientId]);
      expect((await store.list({ page: 1, pageSize: 10, q: a.clientId.slice(0, 13), includeDeleted: false })).items.map((i) => i.clientId)).toEqual([a.clientId]);
      expect((await store.list({ page: 1, pageSize: 10, q: 'console', includeDeleted: false })).items.map((i) => i.clientId)).toEqual([CONSOLE_CLIENT_ID]);
    });
  });
}

const builtIns = builtInClients('http://localhost:8080/');

describe('client stores', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const logger = testLogger();

  beforeAll(async () => {
    db = await createTestDatabase('identity');
    ds = createDataSource({ url: db.url, name: 'identity', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'identity', logger);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  describeClientStoreContract('PostgreSQL', async () => {
    await ds.query('TRUNCATE oauth_clients');
    return new PgClientStore(ds.manager, builtIns);
  });

  describeClientStoreContract('in memory', async () => new MemoryClientStore(builtIns));
});
