/**
 * The OpenID provider's opaque access tokens at the API (services/identity/README.md, "A token
 * from a standard code exchange"): a code exchange without `resource` answers one, and relying
 * parties (mod_auth_openidc, Authlib, most frameworks) pass it on to the app. The gateway cannot
 * verify it itself, so it asks identity (ValidateToken, with the gateway's signed call assertion
 * like every call): identity reads the provider's record and answers the claims it was issued with
 * (those an API JWT of the same grant carries), or UNAUTHENTICATED.
 *
 * Answers are kept in a bounded cache: at most `ttlMs` (a few seconds) and never past the token's
 * expiry, at most `maxEntries` (the oldest go first); a refusal is kept as long, so a token
 * repeated does not become a call each time. Concurrent requests with the same token share one
 * call. The denylist (revocations, ended sessions: the token's jti is the SHA-256 of its value)
 * and a bound token's DPoP proof are checked on every request by the authenticator, cached or not.
 */
import type { identityV1 } from '@iam/contracts';
import { type AccessClaims, AppError } from '@iam/platform/core';

/** The library's opaque tokens: 256 random bits, base64url. Anything else is never sent to identity. */
const OPAQUE_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export function looksOpaque(token: string): boolean {
  return OPAQUE_TOKEN_RE.test(token);
}

/** Identity's claims (proto3: "" and 0 are absent) as the gateway's. */
export function claimsFromIdentity(c: identityV1.Claims | undefined): AccessClaims {
  if (!c) throw AppError.unauthenticated('The access token is invalid or expired.');
  return {
    sub: c.sub,
    jti: c.jti,
    iss: c.iss,
    aud: [...c.aud],
    iat: c.iat,
    nbf: c.nbf,
    exp: c.exp,
    email: c.email,
    roles: [...c.roles],
    permissions: [...c.permissions],
    ...(c.sid ? { sid: c.sid } : {}),
    ...(c.clientId ? { clientId: c.clientId } : {}),
    ...(c.amr.length > 0 ? { amr: [...c.amr] } : {}),
    ...(c.authTime ? { authTime: c.authTime } : {}),
    ...(c.cnfJkt ? { cnfJkt: c.cnfJkt } : {}),
    ...(c.scope ? { scope: c.scope } : {}),
  };
}

export interface OpaqueTokenCacheOptions {
  /** How long an answer is kept at most (ms). */
  readonly ttlMs: number;
  /** How many answers are kept at most. */
  readonly maxEntries: number;
  readonly now?: () => number;
}

type Entry = { claims: AccessClaims; until: number } | { claims: null; until: number };

export class OpaqueTokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<AccessClaims>>();
  private readonly now: () => number;

  constructor(
    /** Identity's answer: the claims, or UNAUTHENTICATED. */
    private readonly resolve: (token: string) => Promise<AccessClaims>,
    private readonly opts: OpaqueTokenCacheOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The token's claims (cached, or asked of identity); UNAUTHENTICATED for an unknown, expired or revoked one. */
  async claims(token: string): Promise<AccessClaims> {
    const hit = this.entries.get(token);
    if (hit && hit.until > this.now()) {
      if (!hit.claims) throw invalid();
      return hit.claims;
    }
    if (hit) this.entries.delete(token);
    let pending = this.inflight.get(token);
    if (!pending) {
      pending = this.ask(token).finally(() => this.inflight.delete(token));
      this.inflight.set(token, pending);
    }
    return pending;
  }

  private async ask(token: string): Promise<AccessClaims> {
    let claims: AccessClaims;
    try {
      claims = await this.resolve(token);
    } catch (err) {
      // A refusal is an answer (kept); identity unreachable is not (the next request asks again).
      if (err instanceof AppError && err.code === 'UNAUTHENTICATED') {
        this.keep(token, { claims: null, until: this.now() + this.opts.ttlMs });
        throw invalid();
      }
      throw err;
    }
    this.keep(token, { claims, until: Math.min(this.now() + this.opts.ttlMs, claims.exp * 1000) });
    return claims;
  }

  private keep(token: string, entry: Entry): void {
    if (entry.until <= this.now()) return;
    while (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, entry);
  }
}

const invalid = () => AppError.unauthenticated('The access token is invalid or expired.');
