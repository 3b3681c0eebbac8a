/**
 * argon2id hashing behind a bounded queue: at most `concurrency` hashes run at once (by default
 * one per core, `defaultHashConcurrency` in config.ts) and at most `queueLimit` wait. Beyond
 * that the caller gets RATE_LIMITED at once instead of timing out behind a queue it cannot see
 * the end of.
 *
 * The queue also knows its callers' deadlines (the gRPC deadline in the active context): a caller
 * whose deadline would pass in the queue (the expected wait, from the recent hash times, plus the
 * work that follows the hash) gets RATE_LIMITED at once, and a job whose caller has gone by its
 * turn is dropped unrun. Under a burst of logins (a reconnect storm) the hashes then go to callers
 * that can still use them, instead of to callers the gateway has already answered 504.
 */
import { AppError, remainingMs } from '@iam/platform';
import * as argon2 from 'argon2';
import type { PasswordHasher } from '../domain/ports';

export interface Argon2Params {
  readonly memoryKiB: number;
  readonly iterations: number;
  readonly parallelism: number;
}

/** Time a caller needs after its hash (the rest of a login: tokens, session, answer). */
const AFTER_HASH_MS = 1_000;
/** Weight of the newest job's time in the running average. */
const EWMA_WEIGHT = 0.2;

/** The one refusal of a full or too slow queue: try again in a second. */
const busy = (): AppError => AppError.rateLimited(1, 'The server is busy; try again shortly.');

export class BoundedQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Running average of a job's time (ms); 0 until the first job ends. */
  private averageMs = 0;

  constructor(
    private readonly concurrency: number,
    private readonly limit: number,
    /** The caller's time left (ms), undefined without a deadline; the active gRPC deadline by default. */
    private readonly timeLeft: () => number | undefined = remainingMs,
  ) {}

  get depth(): number {
    return this.waiting.length;
  }

  /** Expected time before a new job would end: the waiting jobs ahead of it, then its own run. */
  private expectedMs(): number {
    return (Math.floor((this.waiting.length + (this.running >= this.concurrency ? 1 : 0)) / this.concurrency) + 1) * this.averageMs;
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    const left = this.timeLeft();
    if (left !== undefined && this.averageMs > 0 && this.expectedMs() + AFTER_HASH_MS > left) {
      throw busy();
    }
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.limit) throw busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      const now = this.timeLeft();
      if (now !== undefined && now <= 0) throw busy();
      const started = performance.now();
      const result = await job();
      const ms = performance.now() - started;
      this.averageMs = this.averageMs === 0 ? ms : this.averageMs + EWMA_WEIGHT * (ms - this.averageMs);
      return result;
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
