import { HealthMonitor } from './health';
import { testLogger } from './testing';

describe('HealthMonitor', () => {
  it('tells a check that timed out from one that was refused, and keeps since across checks', async () => {
    let refuse = true;
    const monitor = new HealthMonitor({
      checks: { db: async () => undefined },
      informational: {
        slow: () => new Promise<void>(() => undefined),
        refused: async () => {
          if (refuse) throw new Error('connection refused');
        },
      },
      logger: testLogger(),
      timeoutMs: 50,
    });
    const first = await monitor.refresh();
    expect(first.ready).toBe(true);
    expect(first.checks).toEqual({ db: 'up', slow: 'down', refused: 'down' });
    expect(first.timedOut).toEqual(['slow']);
    const second = await monitor.refresh();
    expect(second.since.refused).toEqual(first.since.refused);
    refuse = false;
    const third = await monitor.refresh();
    expect(third.checks.refused).toBe('up');
    expect(third.since.refused!.getTime()).toBeGreaterThanOrEqual(second.checkedAt.getTime());
  });
});
