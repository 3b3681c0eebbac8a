import { AppError } from '@iam/platform';
import { Argon2Hasher, BoundedQueue } from './argon2-hasher';

describe('argon2 hashing behind a bounded queue', () => {
  it('hashes with argon2id at the configured parameters and verifies', async () => {
    const h = new Argon2Hasher({ memoryKiB: 19_456, iterations: 2, parallelism: 1 }, new BoundedQueue(1, 64));
    const hash = await h.hash('Correct-Horse-1');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    await expect(h.verify(hash, 'Correct-Horse-1')).resolves.toBe(true);
    await expect(h.verify(hash, 'wrong')).resolves.toBe(false);
    await expect(h.verify('not a hash', 'x')).resolves.toBe(false);
    expect(h.needsRehash(hash)).toBe(false);
    expect(new Argon2Hasher({ memoryKiB: 8192, iterations: 1, parallelism: 1 }, new BoundedQueue(1, 64)).needsRehash(hash)).toBe(true);
  });

  it('over the queue limit the caller gets RATE_LIMITED at once, not a timeout', async () => {
    const q = new BoundedQueue(1, 2);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running = [q.run(() => gate), q.run(() => gate), q.run(() => gate)];
    const started = Date.now();
    const err = await q.run(async () => 'never').catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(50);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('RATE_LIMITED');
    expect((err as AppError).retryAfter).toBe(1);
    release();
    await Promise.all(running);
    await expect(q.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('a caller whose deadline would pass in the queue gets RATE_LIMITED at once; one that has gone by its turn is dropped unrun', async () => {
    let left: number | undefined;
    const q = new BoundedQueue(1, 64, () => left);
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    await q.run(() => sleep(100)); // the average job: ~100 ms
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    left = undefined;
    const first = q.run(() => gate);
    // One job runs, so a new one ends after ~200 ms, plus the second the login needs after it.
    left = 1_100;
    const started = Date.now();
    const refused = await q.run(async () => 'never').catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(50);
    expect((refused as AppError).code).toBe('RATE_LIMITED');
    left = 5_000;
    let ran = false;
    const queued = q.run(async () => {
      ran = true;
    });
    left = 0; // the caller's deadline passes while it waits
    release();
    await first;
    expect(((await queued.catch((e: unknown) => e)) as AppError).code).toBe('RATE_LIMITED');
    expect(ran).toBe(false);
    left = undefined; // the slot went on: the queue is free again
    await expect(q.run(async () => 'ok')).resolves.toBe('ok');
  });
});
