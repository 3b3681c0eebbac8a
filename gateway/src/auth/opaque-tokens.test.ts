/**
 * The cache of identity's answers about opaque access tokens: bounded in time (a few seconds,
 * never past the token's expiry) and in size, refusals kept as long, an unreachable identity not
 * kept, one call for concurrent requests with the same token. Time is the test's.
 */
import { type AccessClaims, AppError } from '@iam/platform/core';
import { OpaqueTokenCache, looksOpaque } from './opaque-tokens';

const token = (i: number) => `${'t'.repeat(40)}${String(i).padStart(3, '0')}`;

describe('OpaqueTokenCache', () => {
  let now = 1_000_000_000_000;
  const clock = () => now;
  const claims = (exp = Math.floor(now / 1000) + 300): AccessClaims => ({ sub: 'u', jti: 'j', iss: 'i', aud: [], iat: exp - 300, nbf: exp - 300, exp, email: 'e', roles: [], permissions: [] });

  it('only the shape of the provider’s opaque tokens is sent to identity', () => {
    expect(looksOpaque(token(1))).toBe(true);
    expect(looksOpaque('a.b.c')).toBe(false);
    expect(looksOpaque('x'.repeat(42))).toBe(false);
    expect(looksOpaque(`${'x'.repeat(42)}=`)).toBe(false);
  });

  it('keeps an answer a few seconds, never past the token’s expiry; one call for concurrent requests', async () => {
    const asked: string[] = [];
    const expSoon = Math.floor(now / 1000) + 2;
    const cache = new OpaqueTokenCache(async (t) => (asked.push(t), t === token(2) ? claims(expSoon) : claims()), { ttlMs: 5_000, maxEntries: 10, now: clock });
    await Promise.all([cache.claims(token(1)), cache.claims(token(1)), cache.claims(token(1))]);
    expect(asked).toEqual([token(1)]);
    now += 4_000;
    await cache.claims(token(1));
    expect(asked).toHaveLength(1);
    now += 1_001;
    await cache.claims(token(1));
    expect(asked).toHaveLength(2);
    // Expiring in 2 s: kept 2 s, not 5.
    await cache.claims(token(2));
    now += 2_001;
    await cache.claims(token(2));
    expect(asked.filter((t) => t === token(2))).toHaveLength(2);
  });

  it('keeps a refusal as long; an unreachable identity is not an answer', async () => {
    let calls = 0;
    let failure: AppError = AppError.unauthenticated('unknown');
    const cache = new OpaqueTokenCache(async () => {
      calls++;
      throw failure;
    }, { ttlMs: 5_000, maxEntries: 10, now: clock });
    await expect(cache.claims(token(3))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(cache.claims(token(3))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(calls).toBe(1);
    failure = AppError.unavailable('identity is down');
    await expect(cache.claims(token(4))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(cache.claims(token(4))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(calls).toBe(3);
  });

  it('holds at most maxEntries: the oldest go first', async () => {
    const cache = new OpaqueTokenCache(async () => claims(), { ttlMs: 5_000, maxEntries: 3, now: clock });
    for (let i = 0; i < 10; i++) await cache.claims(token(i));
    expect(cache.size).toBe(3);
  });
});
