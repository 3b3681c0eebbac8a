import { TokenBuckets } from './rate-limit';

describe('token buckets', () => {
  it('allows the burst, then the sustained rate, and says how long to wait', () => {
    const b = new TokenBuckets({ perMinute: 60, burst: 3 });
    const t0 = 1_000_000;
    expect([b.take('ip', t0), b.take('ip', t0), b.take('ip', t0)]).toEqual([0, 0, 0]);
    expect(b.take('ip', t0)).toBe(1);
    expect(b.take('other', t0)).toBe(0);
    expect(b.take('ip', t0 + 1_000)).toBe(0);
    expect(b.take('ip', t0 + 1_000)).toBeGreaterThanOrEqual(1);
  });
});
