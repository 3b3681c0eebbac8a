import { retryAfterFailure } from './retry';
import { testLogger } from './testing';

describe('retryAfterFailure', () => {
  it('runs again after doubling delays until it succeeds', async () => {
    const at: number[] = [];
    let failures = 2;
    const start = Date.now();
    const done = await retryAfterFailure(
      async () => {
        at.push(Date.now() - start);
        if (failures-- > 0) throw new Error('database unavailable');
      },
      new Error('first'),
      { forMs: 5_000, firstDelayMs: 20, logger: testLogger(), what: 'test write' },
    );
    expect(done).toBe(true);
    expect(at).toHaveLength(3);
    // A timer never fires early: the gaps are at least the delays, 20 then 40 ms.
    expect(at[0]).toBeGreaterThanOrEqual(19);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(39);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(79);
  });

  it('gives up once its time is over, without rejecting', async () => {
    let calls = 0;
    const done = await retryAfterFailure(
      async () => {
        calls++;
        throw new Error('still down');
      },
      new Error('first'),
      { forMs: 200, firstDelayMs: 20, maxDelayMs: 40, logger: testLogger(), what: 'test write' },
    );
    expect(done).toBe(false);
    // Delays 20, 40, 40, 40, 40 ms fit in 200 ms: at most five more runs, fewer on a busy machine.
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(5);
  });
});
