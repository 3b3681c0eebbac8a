/**
 * The read cache on its own: hits, TTL, bounded size, events, gaps (nothing kept while events may
 * be missed), the race of a slow read with an invalidation, and the writes of a cached collection
 * (read-your-writes without any event). The bus-fed path runs in deploy/all-in-one/test/read-cache.e2e.test.ts.
 */
import { SUBJECTS, encodeEvent, eventsV1 } from '@iam/contracts';
import { InMemoryEventBus } from '@iam/platform/bus';
import { createMetrics } from '@iam/platform/core';
import { testLogger } from '@iam/platform/testing';
import { Type } from '@sinclair/typebox';
import type { CollectionSpec } from '../routes/collections/collection';
import { cachedSpec } from './cached-spec';
import { ReadCache, subscribeReadCache } from './read-cache';

const ID = '00000000-0000-4000-8000-000000000001';
const ROLE = '00000000-0000-4000-8000-000000000002';

function setup(opts: { ttlMs?: number; maxEntries?: number } = {}) {
  let now = 1_000;
  const metrics = createMetrics({ defaultMetrics: false });
  const cache = new ReadCache({ ttlMs: opts.ttlMs ?? 1_000, maxEntries: opts.maxEntries ?? 100, metrics, logger: testLogger(), now: () => now });
  cache.setLive(true);
  let version = 0;
  const loads: string[] = [];
  const load = (id = ID) => async () => {
    loads.push(id);
    return { id, version };
  };
  return { cache, metrics, load, loads, bump: () => version++, tick: (ms: number) => (now += ms) };
}

const outcome = async (metrics: ReturnType<typeof createMetrics>, o: string) =>
  (await metrics.readCacheRequests.get()).values.filter((v) => v.labels.outcome === o).reduce((a, v) => a + v.value, 0);

describe('ReadCache', () => {
  it('answers a repeated read from memory until the TTL passes', async () => {
    const t = setup({ ttlMs: 500 });
    await t.cache.get('user', ID, t.load());
    await t.cache.get('user', ID, t.load());
    expect(t.loads).toHaveLength(1);
    t.tick(501);
    await t.cache.get('user', ID, t.load());
    expect(t.loads).toHaveLength(2);
    expect(await outcome(t.metrics, 'hit')).toBe(1);
    expect(await outcome(t.metrics, 'miss')).toBe(2);
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const t = setup({ maxEntries: 2 });
    for (const id of ['a', 'b', 'c']) await t.cache.get('user', id, t.load(id));
    expect(t.cache.size).toBe(2);
    await t.cache.get('user', 'a', t.load('a'));
    expect(t.loads).toEqual(['a', 'b', 'c', 'a']);
  });

  it('keeps nothing while events may be missed, and forgets everything across a gap', async () => {
    const t = setup();
    await t.cache.get('user', ID, t.load());
    t.cache.setLive(false);
    expect(t.cache.size).toBe(0);
    await t.cache.get('user', ID, t.load());
    await t.cache.get('user', ID, t.load());
    expect(t.loads).toHaveLength(3);
    expect(await outcome(t.metrics, 'bypass')).toBe(2);
    t.cache.setLive(true);
    await t.cache.get('user', ID, t.load());
    await t.cache.get('user', ID, t.load());
    expect(t.loads).toHaveLength(4);
  });

  it('does not keep a read that was on its way while an invalidation happened', async () => {
    const t = setup();
    let release!: () => void;
    const slow = t.cache.get('user', ID, async () => {
      await new Promise<void>((r) => (release = r));
      return { id: ID, version: 'old' };
    });
    await Promise.resolve();
    t.cache.invalidate('user', ID, 'event');
    release();
    expect(await slow).toEqual({ id: ID, version: 'old' });
    expect(await t.cache.get('user', ID, t.load())).toEqual({ id: ID, version: 0 });
  });

  it('a burst of misses for one resource is one load; a read after an invalidation does not join a load that began before it', async () => {
    const t = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = (version: string) => async () => {
      t.loads.push(ID);
      await gate;
      return { id: ID, version };
    };
    const burst = Array.from({ length: 10 }, () => t.cache.get('user', ID, slow('first')));
    await Promise.resolve();
    expect(t.loads).toHaveLength(1);
    // A write through this replica (or an event) between the load's start and its answer: the
    // next read must not get what the load brings back, it loads anew.
    t.cache.invalidate('user', ID, 'write');
    const after = t.cache.get('user', ID, async () => ({ id: ID, version: 'after the write' }));
    release();
    expect(await Promise.all(burst)).toEqual(Array.from({ length: 10 }, () => ({ id: ID, version: 'first' })));
    expect(await after).toEqual({ id: ID, version: 'after the write' });
    expect(await outcome(t.metrics, 'joined')).toBe(9);
    // A failed load fails its joiners too, and leaves nothing behind.
    const failing = () => Promise.reject(new Error('upstream down'));
    t.cache.invalidate('user', ID, 'event');
    const both = [t.cache.get('user', ID, failing), t.cache.get('user', ID, failing)];
    await expect(Promise.all(both)).rejects.toThrow('upstream down');
    expect(await t.cache.get('user', ID, t.load())).toEqual({ id: ID, version: 0 });
  });

  it('keys a resource by its id in lower case: read with an upper-case id, it is the same entry, and the event (lower case) drops it', async () => {
    const t = setup();
    await t.cache.get('user', ID.toUpperCase(), t.load());
    await t.cache.get('user', ID, t.load());
    expect(t.loads).toHaveLength(1);
    t.cache.apply({ subject: SUBJECTS.userDeleted, data: encodeEvent(SUBJECTS.userDeleted, eventsV1.UserChanged.create({ userId: ID })) });
    expect(t.cache.size).toBe(0);
    await t.cache.get('user', ID.toUpperCase(), t.load());
    expect(t.loads).toHaveLength(2);
  });

  it('applies directory events: a user event drops that user, a role event every user, a permission or link event every role', async () => {
    const t = setup();
    const warm = async () => {
      for (const [kind, id] of [['user', ID], ['user', 'other'], ['role', ROLE], ['permission', 'p']] as const) await t.cache.get(kind, id, t.load(id));
    };
    await warm();
    t.cache.apply({ subject: SUBJECTS.userUpdated, data: encodeEvent(SUBJECTS.userUpdated, eventsV1.UserChanged.create({ userId: ID })) });
    expect(t.cache.size).toBe(3);
    t.cache.apply({ subject: SUBJECTS.roleUpdated, data: encodeEvent(SUBJECTS.roleUpdated, eventsV1.RoleChanged.create({ roleId: ROLE, name: 'x', changedFields: ['name'] })) });
    expect(t.cache.size).toBe(1); // the permission
    await warm();
    t.cache.apply({ subject: SUBJECTS.permissionDeleted, data: encodeEvent(SUBJECTS.permissionDeleted, eventsV1.PermissionChanged.create({ permissionId: 'p', name: 'x' })) });
    expect(t.cache.size).toBe(2); // the users
    await warm();
    t.cache.apply({ subject: SUBJECTS.rolePermissionCreated, data: encodeEvent(SUBJECTS.rolePermissionCreated, eventsV1.RolePermissionChanged.create({ linkId: 'l', roleId: ROLE, permissionId: 'p', roleName: 'r', permissionName: 'p' })) });
    expect(t.cache.size).toBe(3);
  });

  it('is fed by the bus: live at once in process, and a published user event drops the user', async () => {
    const t = setup();
    t.cache.setLive(false);
    const bus = new InMemoryEventBus({ logger: testLogger() });
    const sub = subscribeReadCache(t.cache, bus);
    await t.cache.get('user', ID, t.load());
    expect(t.cache.size).toBe(1);
    await bus.declareStreams([{ name: 'DIRECTORY', subjects: ['directory.>'], maxAgeSeconds: 60 }]);
    await bus.publish({ id: 'e1', subject: SUBJECTS.userDeleted, data: encodeEvent(SUBJECTS.userDeleted, eventsV1.UserChanged.create({ userId: ID })), occurredAt: new Date() });
    await new Promise((r) => setTimeout(r, 10));
    expect(t.cache.size).toBe(0);
    await sub.stop();
    await bus.close();
  });
});

describe('cachedSpec: writes through this replica drop what they change before they answer (no event needed)', () => {
  function store() {
    const records = new Map<string, { id: string; name: string }>([[ID, { id: ID, name: 'before' }]]);
    const NameBody = Type.Object({ name: Type.String() });
    const spec: CollectionSpec<{ id: string; name: string }, typeof NameBody, typeof NameBody> = {
      tag: 'users',
      permission: 'users.manage',
      resource: {} as never,
      createBody: NameBody,
      updateBody: NameBody,
      get: async (id) => {
        const r = records.get(id);
        if (!r) throw new Error('not found');
        return { ...r };
      },
      list: async () => ({ items: [...records.values()], totalCount: records.size }),
      create: async (b) => {
        const r = { id: `${records.size}`, name: b.name };
        records.set(r.id, r);
        return r;
      },
      update: async (id, b) => {
        records.set(id, { id, name: b.name });
        return { id, name: b.name };
      },
      remove: async (id) => {
        records.delete(id);
      },
    };
    return spec;
  }

  it('update and delete: the next read is the new record, or not found', async () => {
    const t = setup();
    const spec = cachedSpec(store(), t.cache, 'user');
    expect((await spec.get(ID)).name).toBe('before');
    expect((await spec.get(ID)).name).toBe('before');
    await spec.update(ID, { name: 'after' });
    expect((await spec.get(ID)).name).toBe('after');
    await spec.remove(ID);
    await expect(spec.get(ID)).rejects.toThrow('not found');
  });

  it('a failed write invalidates too (it may have committed before its deadline passed)', async () => {
    const t = setup();
    const inner = store();
    const spec = cachedSpec({ ...inner, update: async (id, b) => (await inner.update(id, b), Promise.reject(new Error('DEADLINE_EXCEEDED'))) }, t.cache, 'user');
    await spec.get(ID);
    await expect(spec.update(ID, { name: 'after' })).rejects.toThrow('DEADLINE');
    expect((await spec.get(ID)).name).toBe('after');
  });

  it('a role write drops every cached user (they show role names); a link write every role', async () => {
    const t = setup();
    await t.cache.get('user', ID, t.load());
    await t.cache.get('role', ROLE, t.load(ROLE));
    await cachedSpec(store(), t.cache, 'role').update(ROLE, { name: 'renamed' });
    expect(t.cache.size).toBe(0);
    await t.cache.get('role', ROLE, t.load(ROLE));
    await cachedSpec(store(), t.cache, 'link').create({ name: 'l' });
    expect(t.cache.size).toBe(0);
  });

  it('without a cache (GATEWAY_READ_CACHE=false) the spec is unchanged', () => {
    const spec = store();
    expect(cachedSpec(spec, undefined, 'user')).toBe(spec);
  });
});
