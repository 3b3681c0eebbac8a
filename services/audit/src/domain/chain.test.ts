import { GENESIS_HASH, brokenLink, canonicalJson, entryHash } from './chain';
import type { AuditEntry } from './entry';

const base = {
  id: '8a6e0f0e-6f1c-4d1a-9a55-2b1c3d4e5f60',
  seq: 1,
  prevHash: GENESIS_HASH,
  eventId: 'e-1',
  occurredAt: new Date('2026-11-23T10:00:00.000Z'),
  actor: { type: 'user' as const, id: 'u-1', email: 'a@example.com' },
  action: 'user.roles.changed',
  target: { type: 'user', id: 'u-2' },
  changes: [{ field: 'roles', before: ['Support'], after: ['Administrator', 'Support'] }],
};

describe('the hash chain', () => {
  it('canonical JSON sorts keys at every level and leaves undefined out', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":2,"z":1}]},"b":1}');
  });

  it('the same entry always hashes alike; any field changed changes the hash', () => {
    const h = entryHash(base);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(entryHash({ ...base, actor: { email: 'a@example.com', id: 'u-1', type: 'user' } })).toBe(h);
    for (const changed of [
      { seq: 2 },
      { prevHash: 'f'.repeat(64) },
      { action: 'user.updated' },
      { actor: { type: 'system' as const } },
      { target: { type: 'user', id: 'u-3' } },
      { changes: [{ field: 'roles', before: ['Support'], after: ['Support'] }] },
      { occurredAt: new Date('2026-11-23T10:00:00.001Z') },
      { clientIp: '203.0.113.9' },
    ]) {
      expect(entryHash({ ...base, ...changed })).not.toBe(h);
    }
  });

  it('a link holds only when seq follows, prevHash matches and the content is its own', () => {
    const first: AuditEntry = { ...base, recordedAt: new Date(), hash: entryHash(base) };
    const genesis = { seq: 0, hash: GENESIS_HASH };
    expect(brokenLink(first, genesis)).toBeUndefined();
    expect(brokenLink({ ...first, action: 'user.updated' }, genesis)).toMatch(/altered/);
    expect(brokenLink(first, { seq: 0, hash: 'f'.repeat(64) })).toMatch(/previous-hash/);
    const third = { ...base, seq: 3, prevHash: first.hash };
    expect(brokenLink({ ...third, recordedAt: new Date(), hash: entryHash(third) }, { seq: 1, hash: first.hash })).toMatch(/2\.\.2 are missing/);
  });
});
