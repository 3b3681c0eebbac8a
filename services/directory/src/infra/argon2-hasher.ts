/**
 * argon2id hashing behind a bounded queue: at most `concurrency` hashes run at once (by default
 * one per core, `defaultHashConcurrency` in config.ts) and at most `queueLimit` wait. Beyond
 * that the caller gets RATE_LIMITED at once instead of timing out behind a queue it cannot see
 * the end of.
 */
import { AppError } from '@iam/platform';
import * as argon2 from 'argon2';
import type { PasswordHasher } from '../domain/ports';

export interface Argon2Params {
  readonly memoryKiB: number;
  readonly iterations: number;
  readonly parallelism: number;
}

export class BoundedQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly limit: number,
  ) {}

  get depth(): number {
    return this.waiting.length;
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.limit) throw AppError.rateLimited(1, 'The server is busy; try again shortly.');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export class Argon2Hasher implements PasswordHasher {
  private readonly options: argon2.Options & { raw?: false };
  private dummy: Promise<string> | undefined;

  constructor(
    params: Argon2Params,
    /** Sized by the configuration (ARGON2_CONCURRENCY, ARGON2_QUEUE_LIMIT). */
    private readonly queue: BoundedQueue,
  ) {
    this.options = { type: argon2.argon2id, memoryCost: params.memoryKiB, timeCost: params.iterations, parallelism: params.parallelism };
  }

  hash(password: string): Promise<string> {
    return this.queue.run(() => argon2.hash(password, this.options));
  }

  verify(hash: string, password: string): Promise<boolean> {
    return this.queue.run(() => argon2.verify(hash, password).catch(() => false));
  }

  /** Whether a stored hash was made with other parameters than the current ones. */
  needsRehash(hash: string): boolean {
    try {
      return argon2.needsRehash(hash, this.options);
    } catch {
      return false;
    }
  }

  async verifyDummy(password: string): Promise<void> {
    // A hash with the current parameters, made once, so the dummy check costs what a real one costs.
    this.dummy ??= argon2.hash('dummy password, never valid', this.options);
    const hash = await this.dummy;
    await this.queue.run(() => argon2.verify(hash, password).catch(() => false));
  }
}
