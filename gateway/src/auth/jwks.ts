/**
 * The identity service's public keys, cached. An unknown `kid` triggers a refetch (at most one
 * every few seconds, shared by concurrent requests); the set is also refreshed periodically so
 * pre-published keys are known before their first token.
 */
import { type JwtAlg, type Logger, AppError, importPublicJwk } from '@iam/platform/core';
import type { CryptoKey, JWK } from 'jose';

export type FetchJwks = () => Promise<JWK[]>;

export class JwksCache {
  private keys = new Map<string, CryptoKey>();
  private inflight: Promise<void> | undefined;
  private lastFetch = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fetchJwks: FetchJwks,
    private readonly alg: JwtAlg,
    private readonly logger: Logger,
    private readonly minRefetchMs = 5_000,
  ) {}

  start(refreshMs = 5 * 60_000): void {
    void this.refresh().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'JWKS not loaded yet'));
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Readiness: throws until a key of the configured algorithm is loaded (fetching meanwhile). */
  async check(): Promise<void> {
    if (this.keys.size === 0) await this.refresh();
    if (this.keys.size === 0) throw new Error(`identity published no ${this.alg} key yet`);
  }

  /** The key for `kid`, or undefined when identity does not know it either. */
  async key(kid: string): Promise<CryptoKey | undefined> {
    const hit = this.keys.get(kid);
    if (hit) return hit;
    if (Date.now() - this.lastFetch >= this.minRefetchMs || this.keys.size === 0) {
      try {
        await this.refresh();
      } catch (err) {
        if (this.keys.size === 0) throw AppError.unavailable('Tokens cannot be verified right now; try again shortly.', err);
      }
    }
    return this.keys.get(kid);
  }

  refresh(): Promise<void> {
    this.inflight ??= (async () => {
      try {
        this.lastFetch = Date.now();
        const jwks = await this.fetchJwks();
        const next = new Map<string, CryptoKey>();
        for (const jwk of jwks) {
          if (!jwk.kid || jwk.alg !== this.alg) continue;
          try {
            next.set(jwk.kid, await importPublicJwk(jwk, this.alg));
          } catch (err) {
            this.logger.warn({ kid: jwk.kid, err: (err as Error).message }, 'JWKS key not usable');
          }
        }
        this.keys = next;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}
