/**
 * Per-client token buckets for sensitive anonymous routes (login, refresh). Over the limit the
 * request is answered 429 with Retry-After before any work is done.
 */
import { AppError } from '@iam/platform';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

export interface RateLimit {
  /** Sustained requests per minute per client. */
  readonly perMinute: number;
  /** Requests a client may make at once before the sustained rate applies. */
  readonly burst: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = Date.now();

  constructor(private readonly limit: RateLimit) {}

  /** Takes a token for `key`; returns 0 when allowed, else the seconds until one is available. */
  take(key: string, now = Date.now()): number {
    const ratePerMs = this.limit.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.limit.burst, at: now };
    b.tokens = Math.min(this.limit.burst, b.tokens + (now - b.at) * ratePerMs);
    b.at = now;
    this.buckets.set(key, b);
    this.sweep(now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - b.tokens) / ratePerMs / 1000);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    const fullAfter = (this.limit.burst / this.limit.perMinute) * 60_000;
    for (const [k, b] of this.buckets) if (now - b.at > fullAfter) this.buckets.delete(k);
  }
}

export function rateLimit(name: string, limit: RateLimit): onRequestAsyncHookHandler {
  const buckets = new TokenBuckets(limit);
  return async (req: FastifyRequest) => {
    const wait = buckets.take(`${name}:${req.ip}`);
    if (wait > 0) throw AppError.rateLimited(wait);
  };
}
