/**
 * DPoP (RFC 9449) at the resource server: a token bound to a key (`cnf.jkt`) is only accepted
 * with a fresh proof of that key for this very request (§4.3, §7.1). The proof is a JWT with
 * `typ: dpop+jwt`, an asymmetric `alg`, its public key in the header (`jwk`), and `jti`, `htm`,
 * `htu` (no query or fragment), `iat` within the window and `ath` = base64url(SHA-256(token)).
 * Each proof is accepted once: its `jti` is remembered for the window (a ReplayStore: in this
 * process, or in Redis so every gateway replica refuses a proof another one already took). When
 * the store cannot record the id, the proof is refused (fail closed, ReplayStoreUnavailable): it
 * could be a replay, and nothing would tell.
 */
import { createHash } from 'node:crypto';
import { type ProtectedHeaderParameters, calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';

/** The proof algorithms accepted (those the provider accepts: provider.ts dPoPSigningAlgValues). */
export const DPOP_ALGS = ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'] as const;

/** RFC 9449 §7.1 error codes of a refusal: the proof itself, or the token's use. */
export type DpopErrorCode = 'invalid_dpop_proof' | 'invalid_token';

/** A refusal: the caller answers 401 with `WWW-Authenticate: DPoP error="<code>"`. */
export class DpopError extends Error {
  constructor(
    readonly code: DpopErrorCode,
    /** Caller-facing, names no secret. */
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'DpopError';
  }
}

/** Remembers proof ids; `claim` is true the first time an id is seen within its lifetime, false after. */
export interface ReplayStore {
  claim(jti: string, ttlSeconds: number): Promise<boolean>;
}

/**
 * Proof ids in this process: a map bounded by the iat window (an entry lives as long as a proof
 * with that id could still be accepted) and by a size cap (oldest first). Enough for one gateway;
 * several replicas share a RedisReplayStore.
 */
export class MemoryReplayStore implements ReplayStore {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(jti: string, ttlSeconds: number): Promise<boolean> {
    const t = this.now();
    const until = this.seen.get(jti);
    if (until !== undefined && until > t) return false;
    this.seen.delete(jti);
    // Drop expired entries from the oldest end; past the cap, the oldest go regardless (each is
    // older than any live proof can be only when the cap is sized for the traffic: 100k ids per window).
    for (const [k, v] of this.seen) {
      if (v > t && this.seen.size < this.maxEntries) break;
      this.seen.delete(k);
    }
    this.seen.set(jti, t + ttlSeconds * 1000);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}

/** The Redis commands a RedisReplayStore needs (ioredis's `set`). */
export interface RedisSetNx {
  set(key: string, value: string, ex: 'EX', seconds: number, nx: 'NX'): Promise<'OK' | null>;
}

/** Proof ids shared by every gateway replica: `SET key 1 EX ttl NX` answers OK only for the first. */
export class RedisReplayStore implements ReplayStore {
  constructor(
    private readonly redis: RedisSetNx,
    private readonly prefix: string,
  ) {}

  async claim(jti: string, ttlSeconds: number): Promise<boolean> {
    const key = this.prefix + createHash('sha256').update(jti).digest('base64url');
    return (await this.redis.set(key, '1', 'EX', Math.max(1, Math.ceil(ttlSeconds)), 'NX')) === 'OK';
  }
}

/**
 * The replay store could not record a proof's id (Redis unreachable or failing): the proof is
 * refused, never let through, since a replay could not be told apart (fail closed). The caller
 * answers 503 with Retry-After: the client may retry with a new proof.
 */
export class ReplayStoreUnavailable extends Error {
  constructor(cause: unknown) {
    super('the DPoP replay store is unavailable', { cause });
    this.name = 'ReplayStoreUnavailable';
  }
}

/** A store whose failures are reported (`onError`: a warning, a metric) and passed on, so the proof is refused. */
export class ReportingReplayStore implements ReplayStore {
  constructor(
    private readonly store: ReplayStore,
    private readonly onError: (err: unknown) => void,
  ) {}

  async claim(jti: string, ttlSeconds: number): Promise<boolean> {
    try {
      return await this.store.claim(jti, ttlSeconds);
    } catch (err) {
      this.onError(err);
      throw err;
    }
  }
}

export interface DpopCheck {
  /** The `DPoP` request header (undefined when absent; an array when repeated). */
  readonly proof: string | string[] | undefined;
  /** The request method, e.g. GET. */
  readonly method: string;
  /** The URIs the proof may name as `htu` (the request's own, and the public one): origin + path, no query. */
  readonly urls: readonly string[];
  /** The access token sent with it (`ath`). */
  readonly accessToken: string;
  /** The token's `cnf.jkt`: the key it is bound to. */
  readonly jkt: string;
}

export interface DpopVerifier {
  /** Resolves when the proof is valid for this request and seen for the first time; DpopError otherwise, ReplayStoreUnavailable when its id cannot be recorded. */
  verify(c: DpopCheck): Promise<void>;
}

const MAX_PROOF_LENGTH = 4_096;

/** The scheme, authority and path of a URI (RFC 9449 §4.3: `htu` is compared without query and fragment). */
export function normalizeHtu(u: string): string | null {
  try {
    const url = new URL(u);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return null;
  }
}

export function createDpopVerifier(opts: {
  replay: ReplayStore;
  /** How far a proof's `iat` may lie from now, either way (seconds). */
  windowSeconds?: number;
  now?: () => number;
}): DpopVerifier {
  const window = opts.windowSeconds ?? 60;
  const now = opts.now ?? Date.now;
  const bad = (detail: string) => new DpopError('invalid_dpop_proof', detail);
  return {
    async verify(c) {
      if (c.proof === undefined) throw new DpopError('invalid_token', 'The access token is bound to a key (DPoP): a DPoP proof is required.');
      if (Array.isArray(c.proof) || c.proof.length === 0 || c.proof.length > MAX_PROOF_LENGTH) throw bad('Exactly one DPoP proof is required.');
      let header: ProtectedHeaderParameters;
      try {
        header = decodeProtectedHeader(c.proof);
      } catch {
        throw bad('The DPoP proof is not a JWT.');
      }
      if (header.typ !== 'dpop+jwt') throw bad('The DPoP proof must have typ dpop+jwt.');
      if (typeof header.alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(header.alg)) throw bad('The DPoP proof algorithm is not accepted.');
      const jwk = header.jwk;
      if (!jwk || typeof jwk !== 'object' || 'd' in jwk || jwk.kty === 'oct') throw bad('The DPoP proof must carry a public key (jwk).');
      let thumbprint: string;
      let payload: Record<string, unknown>;
      try {
        const key = await importJWK(jwk, header.alg);
        if (key instanceof Uint8Array) throw new Error('symmetric');
        thumbprint = await calculateJwkThumbprint(jwk, 'sha256');
        ({ payload } = await jwtVerify(c.proof, key, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGS] }));
      } catch {
        throw bad('The DPoP proof signature is invalid.');
      }
      if (thumbprint !== c.jkt) throw new DpopError('invalid_token', 'The DPoP proof is not made with the key the access token is bound to.');
      if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw bad('The DPoP proof needs a jti.');
      if (payload.htm !== c.method.toUpperCase()) throw bad('The DPoP proof is for another method (htm).');
      const htu = typeof payload.htu === 'string' ? normalizeHtu(payload.htu) : null;
      if (!htu || !c.urls.some((u) => normalizeHtu(u) === htu)) throw bad('The DPoP proof is for another URI (htu).');
      const t = now() / 1000;
      if (typeof payload.iat !== 'number' || Math.abs(payload.iat - t) > window) throw bad('The DPoP proof is too old or from the future (iat).');
      const ath = createHash('sha256').update(c.accessToken, 'ascii').digest('base64url');
      if (payload.ath !== ath) throw bad('The DPoP proof is for another access token (ath).');
      // Remembered as long as the proof could still pass the iat check (window either way); a
      // proof whose id cannot be recorded is refused (fail closed).
      let first: boolean;
      try {
        first = await opts.replay.claim(payload.jti, 2 * window + 1);
      } catch (err) {
        throw new ReplayStoreUnavailable(err);
      }
      if (!first) throw bad('The DPoP proof was already used (jti).');
    },
  };
}
