import { BatchLoop } from './batch-loop';
import { testLogger } from './testing';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('BatchLoop as a periodic job (a service housekeeping: claims nothing, runs once per pollMs)', () => {
  it('repeats, never overlaps itself, goes on after a failure, and stop() waits for the run in progress', async () => {
    let runs = 0;
    let active = 0;
    let overlapped = false;
    let finished = 0;
    const loop = new BatchLoop({
      name: 'test work',
      batchSize: 1,
      pollMs: 10,
      logger: testLogger(),
      work: async () => {
        runs++;
        overlapped ||= active > 0;
        active++;
        await sleep(35); // longer than pollMs
        active--;
        finished++;
        if (runs === 1) throw new Error('first run fails'); // retried after the backoff (250 ms)
        return 0;
      },
    });
    loop.start();
    await sleep(600);
    await loop.stop();
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(overlapped).toBe(false);
    expect(finished).toBe(runs);
    const after = runs;
    await sleep(50);
    expect(runs).toBe(after);
  });
});

describe('BatchLoop.stop()', () => {
  it('called while a batch runs, returns when that batch ends: it does not sleep its poll interval first', async () => {
    let release!: () => void;
    const running = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inBatch = new Promise<void>((r) => (started = r));
    const loop = new BatchLoop({
      name: 'slow poller',
      batchSize: 10,
      pollMs: 60_000,
      logger: testLogger(),
      work: async () => {
        started();
        await running;
        return 0;
      },
    });
    loop.start();
    await inBatch;
    const t = Date.now();
    const stopped = loop.stop();
    release();
    await stopped;
    expect(Date.now() - t).toBeLessThan(1_000);
  });
});
