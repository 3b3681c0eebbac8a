/**
 * Identity's principal cache over the in-memory bus: hits, the events that drop entries (a user
 * event that user, any other directory event everything), nothing kept while events may be missed,
 * and credential checks never cached.
 */
import { SUBJECTS, encodeEvent, eventsV1 } from '@iam/contracts';
import { InMemoryEventBus } from '@iam/platform/bus';
import { testLogger } from '@iam/platform/testing';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { cachedDirectory } from './principal-cache';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

function fakeDirectory() {
  const calls: string[] = [];
  let roles = ['Viewer'];
  const principal = (userId: string): Principal => ({ userId, firstName: 'F', lastName: 'L', email: `${userId}@example.com`, roles, permissions: roles.map((r) => `${r}.p`), emailVerified: true });
  const directory: Directory = {
    verifyCredentials: async () => {
      calls.push('verify');
      return { principal: principal(A), accountExists: true, accountId: A };
    },
    principal: async (id) => {
      calls.push(`principal ${id}`);
      return principal(id);
    },
    findAccount: async () => {
      calls.push('find');
      return null;
    },
    resetPassword: async () => ({ changedAt: new Date(), email: '', firstName: '' }),
    markEmailVerified: async () => undefined,
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: async (names) => {
      calls.push(`roles ${names.join(',')}`);
      return names.map((name) => ({ name, permissions: [`${name}.p`] }));
    },
    resolvePermissions: async (names) => names.map((name) => ({ name, description: '' })),
  };
  return { directory, calls, setRoles: (r: string[]) => (roles = r) };
}

async function setup() {
  const inner = fakeDirectory();
  const cached = cachedDirectory(inner.directory, { ttlMs: 30_000, maxEntries: 100 });
  const bus = new InMemoryEventBus({ logger: testLogger() });
  await bus.declareStreams([{ name: 'DIRECTORY', subjects: ['directory.>'], maxAgeSeconds: 60 }]);
  const sub = bus.subscribe(cached.broadcast.subjects, cached.broadcast.handler, { onLive: cached.broadcast.onLive });
  const publish = async (subject: string, data: Uint8Array) => {
    await bus.publish({ id: `${Math.random()}`, subject, data, occurredAt: new Date() });
    await new Promise((r) => setTimeout(r, 10));
  };
  const userUpdated = (userId: string) => publish(SUBJECTS.userUpdated, encodeEvent(SUBJECTS.userUpdated, eventsV1.UserChanged.create({ userId, changedFields: ['roles'] })));
  const roleUpdated = () => publish(SUBJECTS.roleUpdated, encodeEvent(SUBJECTS.roleUpdated, eventsV1.RoleChanged.create({ roleId: B, name: 'Viewer', changedFields: ['name'] })));
  return { ...inner, d: cached.directory, cached, bus, sub, userUpdated, roleUpdated, close: async () => (await sub.stop(), await bus.close()) };
}

describe('identity principal cache', () => {
  it('answers a repeated principal from memory; a user event drops that user only', async () => {
    const t = await setup();
    await t.d.principal(A);
    await t.d.principal(A);
    await t.d.principal(B);
    expect(t.calls).toEqual([`principal ${A}`, `principal ${B}`]);
    t.setRoles(['Administrator']);
    await t.userUpdated(A);
    expect((await t.d.principal(A))?.roles).toEqual(['Administrator']);
    await t.d.principal(B);
    expect(t.calls).toEqual([`principal ${A}`, `principal ${B}`, `principal ${A}`]);
    await t.close();
  });

  it('a role event drops every principal and every role set (a principal carries its roles\' permissions)', async () => {
    const t = await setup();
    await t.d.principal(A);
    await t.d.resolveRoles(['Viewer', 'Admin']);
    await t.d.resolveRoles(['admin', 'viewer']); // the same set, any order or case
    expect(t.calls).toEqual([`principal ${A}`, 'roles Viewer,Admin']);
    await t.roleUpdated();
    await t.d.principal(A);
    await t.d.resolveRoles(['Viewer', 'Admin']);
    expect(t.calls).toEqual([`principal ${A}`, 'roles Viewer,Admin', `principal ${A}`, 'roles Viewer,Admin']);
    await t.close();
  });

  it('keeps nothing while events may be missed, and never caches credential checks', async () => {
    const t = await setup();
    t.cached.broadcast.onLive(false);
    await t.d.principal(A);
    await t.d.principal(A);
    await t.d.verifyCredentials('a@example.com', 'x');
    await t.d.verifyCredentials('a@example.com', 'x');
    await t.d.findAccount('a@example.com');
    await t.d.findAccount('a@example.com');
    expect(t.calls).toEqual([`principal ${A}`, `principal ${A}`, 'verify', 'verify', 'find', 'find']);
    await t.close();
  });
});
