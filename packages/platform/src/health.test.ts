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

  it('holds a component that was up while its checks only time out, for the grace; a refusal counts at once', async () => {
    let mode: 'answer' | 'hang' | 'refuse' = 'answer';
    const monitor = new HealthMonitor({
      checks: {
        upstream: async () => {
          if (mode === 'hang') await new Promise<void>(() => undefined);
          if (mode === 'refuse') throw new Error('connection refused');
        },
      },
      logger: testLogger(),
      timeoutMs: 20,
      timeoutGraceMs: 150,
    });
    expect((await monitor.refresh()).ready).toBe(true);
    mode = 'hang';
    const held = await monitor.refresh();
    expect(held).toMatchObject({ ready: true, checks: { upstream: 'up' }, timedOut: ['upstream'] });
    await new Promise((r) => setTimeout(r, 160));
    const down = await monitor.refresh();
    expect(down).toMatchObject({ ready: false, checks: { upstream: 'down' }, timedOut: ['upstream'] });
    // An answer ends the episode: the next timeout is held again, for a grace of its own.
    mode = 'answer';
    expect((await monitor.refresh()).ready).toBe(true);
    mode = 'hang';
    expect((await monitor.refresh()).ready).toBe(true);
    mode = 'refuse';
    expect(await monitor.refresh()).toMatchObject({ ready: false, checks: { upstream: 'down' }, timedOut: [] });
  });

  it('holds nothing before the first answer: a check that never answered is down', async () => {
    const monitor = new HealthMonitor({ checks: { upstream: () => new Promise<void>(() => undefined) }, logger: testLogger(), timeoutMs: 20, timeoutGraceMs: 10_000 });
    expect(await monitor.refresh()).toMatchObject({ ready: false, checks: { upstream: 'down' } });
  });

  it('checks every intervalMs while anything is down or changing, every idleIntervalMs once steady', async () => {
    jest.useFakeTimers();
    try {
      let up = false;
      let runs = 0;
      const monitor = new HealthMonitor({
        checks: { db: async () => { runs++; if (!up) throw new Error('connection refused'); } },
        logger: testLogger(),
        intervalMs: 100,
        idleIntervalMs: 1_000,
      });
      const after = async (ms: number) => {
        runs = 0;
        await jest.advanceTimersByTimeAsync(ms);
        return runs;
      };
      monitor.start();
      expect(await after(500)).toBeGreaterThanOrEqual(4); // down: every 100 ms
      up = true;
      await after(300); // up, changed, then steady
      expect(await after(3_000)).toBeLessThanOrEqual(4); // steady: every second
      up = false;
      await after(1_000); // the refusal is seen within the idle interval
      expect(monitor.snapshot().ready).toBe(false);
      expect(await after(500)).toBeGreaterThanOrEqual(4);
      // Still down after ten unchanged checks: every idle interval, its recovery seen within one.
      await after(1_500);
      expect(await after(3_000)).toBeLessThanOrEqual(4);
      up = true;
      await after(1_000);
      expect(monitor.snapshot().ready).toBe(true);
      monitor.stop();
      expect(await after(5_000)).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
