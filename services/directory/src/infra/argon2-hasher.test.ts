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
});
