/**
 * The provider's client cache over the in-memory bus: reads kept, dropped by identity.client.*
 * events and by a write through this replica once it committed; nothing kept while events may be
 * missed; the secret check stays constant-shape.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS, encodeEvent, eventsV1 } from '@iam/contracts';
import { InMemoryEventBus } from '@iam/platform/bus';
import { sha256 } from '@iam/platform';
import { testLogger } from '@iam/platform/testing';
import type { ClientUseCases } from '../app/clients';
import type { ClientLookup, ClientSecrets, OAuthClient } from '../domain/clients';
import { cachedClients, invalidatingClientUseCases } from './client-cache';

const ID = randomUUID();

function fakeRegistry() {
  const calls: string[] = [];
  let secret = 'first-secret';
  const inner: ClientLookup & ClientSecrets = {
    find: async (id) => {
      calls.push(`find ${id}`);
      return id === ID ? ({ clientId: ID } as OAuthClient) : null;
    },
    verifySecret: async () => {
      throw new Error('the cache checks secrets itself');
    },
    secretHash: async (id) => {
      calls.push(`secret ${id}`);
      return id === ID ? sha256(secret) : null;
    },
  };
  return { inner, calls, rotate: (s: string) => (secret = s) };
}

async function setup() {
  const r = fakeRegistry();
  const cache = cachedClients(r.inner, { ttlMs: 30_000, maxEntries: 100 });
  const bus = new InMemoryEventBus({ logger: testLogger() });
  await bus.declareStreams([{ name: 'IDENTITY', subjects: ['identity.>'], maxAgeSeconds: 60 }]);
  const sub = bus.subscribe(cache.broadcast.subjects, cache.broadcast.handler, { onLive: cache.broadcast.onLive });
  const publish = async (subject: string) => {
    await bus.publish({ id: randomUUID(), subject, data: encodeEvent(subject as typeof SUBJECTS.clientUpdated, eventsV1.ClientChanged.create({ clientId: ID })), occurredAt: new Date() });
    await new Promise((res) => setTimeout(res, 10));
  };
  return { ...r, cache, publish, close: async () => (await sub.stop(), await bus.close()) };
}

describe('the provider client cache', () => {
  it('keeps a client and its secret hash; a secret rotation event drops them', async () => {
    const t = await setup();
    expect(await t.cache.lookup.find(ID)).toMatchObject({ clientId: ID });
    expect(await t.cache.lookup.find(ID)).toMatchObject({ clientId: ID });
    expect(await t.cache.lookup.verifySecret(ID, 'first-secret')).toBe(true);
    expect(await t.cache.lookup.verifySecret(ID, 'wrong')).toBe(false);
    expect(t.calls).toEqual([`find ${ID}`, `secret ${ID}`]);
    t.rotate('second-secret');
    await t.publish(SUBJECTS.clientSecretRotated);
    expect(await t.cache.lookup.verifySecret(ID, 'first-secret')).toBe(false);
    expect(await t.cache.lookup.verifySecret(ID, 'second-secret')).toBe(true);
    // An unknown client is no secret's owner.
    expect(await t.cache.lookup.verifySecret(randomUUID(), 'first-secret')).toBe(false);
    await t.close();
  });

  it('a write through this replica drops the client once it committed, even before its event', async () => {
    const t = await setup();
    await t.cache.lookup.verifySecret(ID, 'first-secret');
    const useCases = { rotateSecret: async () => ({ client: { clientId: ID } }) } as unknown as ClientUseCases;
    t.rotate('second-secret');
    await invalidatingClientUseCases(useCases, t.cache).rotateSecret({ userId: 'admin' }, ID);
    expect(await t.cache.lookup.verifySecret(ID, 'second-secret')).toBe(true);
    await t.close();
  });

  it('keeps nothing while events may be missed', async () => {
    const t = await setup();
    t.cache.broadcast.onLive(false);
    await t.cache.lookup.find(ID);
    await t.cache.lookup.find(ID);
    expect(t.calls).toEqual([`find ${ID}`, `find ${ID}`]);
    await t.close();
  });
});
