/**
 * @fastify/rate-limit for the sensitive anonymous routes (login, refresh, email actions): a route
 * opts in with `config.rateLimit` (see `limitOf`). Counters live in Redis when `REDIS_URL` is set,
 * so every gateway replica shares one budget per client; otherwise in this process. When Redis
 * cannot answer, limits fail open (the request goes on) with a warning and a metric: an outage
 * of the limiter must not become an outage of login.
 */
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import { AppError, type Logger, type Metrics } from '@iam/platform/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';

/** A route's limit: `burst` requests per window of `burst / perMinute` minutes, per client (or subject). */
export interface RateLimit {
  readonly perMinute: number;
  readonly burst: number;
}

/**
 * The `config.rateLimit` of a route limited as `name`: routes of one name share a budget per
 * client address, or per what `key` names (a token's subject). The store's key is `name:key`.
 */
export function limitOf(name: string, limit: RateLimit, key: (req: FastifyRequest) => string = (req) => req.ip) {
  return {
    max: limit.burst,
    timeWindow: Math.max(1_000, Math.round((limit.burst / limit.perMinute) * 60_000)),
    keyGenerator: (req: FastifyRequest) => `${name}:${key(req)}`,
  };
}

// Fixed window: the first hit starts it; every hit returns the count and the time left.
const INCR = `
local c = redis.call('INCR', KEYS[1])
local t = redis.call('PTTL', KEYS[1])
if c == 1 or t < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); t = tonumber(ARGV[1]) end
return {c, t}`;

type Callback = (err: Error | null, res?: { current: number; ttl: number }) => void;

/** The plugin's store contract over Redis; errors are reported, then passed on (skipOnError lets the request through). */
class RedisWindowStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly onError: (err: Error) => void,
  ) {}

  incr(key: string, cb: Callback, timeWindow: number): void {
    this.redis.eval(INCR, 1, this.prefix + key, String(timeWindow)).then(
      (r) => {
        const [current, ttl] = r as [number, number];
        cb(null, { current, ttl });
      },
      (err: Error) => {
        this.onError(err);
        cb(err);
      },
    );
  }

  child(): RedisWindowStore {
    return this;
  }
}

/** The same windows in this process (no REDIS_URL): one map for every route, so routes of one name share a budget. */
class MemoryWindowStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = Date.now();

  incr(key: string, cb: Callback, timeWindow: number): void {
    const now = Date.now();
    this.sweep(now);
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + timeWindow };
      this.windows.set(key, w);
    }
    w.count += 1;
    cb(null, { current: w.count, ttl: w.resetAt - now });
  }

  child(): MemoryWindowStore {
    return this;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}

export interface RateLimitOptions {
  readonly redis: { readonly url?: string; readonly keyPrefix: string };
  readonly logger: Logger;
  readonly metrics: Metrics;
}

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: RateLimitOptions) => {
    let shared: RedisWindowStore | MemoryWindowStore = new MemoryWindowStore();
    if (opts.redis.url) {
      // Fail fast instead of queueing while Redis is away: a check waits for no reconnection.
      const redis = new Redis(opts.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1_000, lazyConnect: false });
      let warned = 0;
      redis.on('error', (err: Error) => {
        if (Date.now() - warned > 30_000) {
          warned = Date.now();
          opts.logger.warn({ err: err.message }, 'rate-limit store (Redis) unreachable; limits fail open');
        }
      });
      app.addHook('onClose', async () => {
        redis.disconnect();
      });
      // Started with Redis reachable, the first requests are counted too; without it, start anyway.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 2_000);
        redis.once('ready', () => (clearTimeout(t), resolve()));
      });
      shared = new RedisWindowStore(redis, opts.redis.keyPrefix, () => opts.metrics.rateLimitStoreErrors.inc());
    }
    // The plugin constructs its store with `new`; a constructor returning an object yields it.
    const store = function SharedStore() {
      return shared;
    } as unknown as RateLimitPluginOptions['store'];
    await app.register(rateLimit, {
      global: false,
      store,
      skipOnError: true,
      // Retry-After comes with the problem (errors plugin); the informational headers stay off.
      addHeaders: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false, 'retry-after': false },
      addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
      errorResponseBuilder: (_req, ctx) => AppError.rateLimited(Math.max(1, Math.ceil(ctx.ttl / 1000))),
    });
  },
  { name: 'iam-rate-limit' },
);
