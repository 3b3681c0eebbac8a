import { isIP } from 'node:net';
import { join } from 'node:path';
import { type EnvReader, JWT_ALGS, type JwtAlg } from '@iam/platform/core';

export const PROFILES = ['full', 'compact', 'edge'] as const;
export type Profile = (typeof PROFILES)[number];
/** Who may introspect the edge GraphQL schema: anyone, a caller with a valid bearer token, nobody. */
export const INTROSPECTION = ['public', 'authenticated', 'off'] as const;
export type Introspection = (typeof INTROSPECTION)[number];

export interface GatewayConfig {
  readonly host: string;
  /** Level of the one access-log line per request (probes and scrapes are always at debug). */
  readonly requestLogLevel: 'info' | 'debug';
  readonly port: number;
  /**
   * Connections the kernel may queue for the API port before the process accepts them (Node's
   * default, 511, overflowed when 500 clients connected at once: dropped SYNs came back only after
   * the client's 1, 3 and 7 s retransmissions). Linux caps it at net.core.somaxconn.
   */
  readonly listenBacklog: number;
  /** GATEWAY_OPS_PORT: a second listener with /health/* (components named) and /metrics only; 0 = none. */
  readonly opsPort: number;
  /** Route groups to mount; empty = the Minimal profile (health and metrics only). */
  readonly profiles: readonly Profile[];
  readonly upstreams: {
    readonly identity: string;
    readonly directory: string;
    readonly notification: string;
    /**
     * The edge profile's upstream (COMMERCE_GRPC_TARGET). A composition root that starts no
     * commerce service leaves it out; the edge profile is then not mounted (a warning says so).
     */
    readonly commerce?: string;
    /** The audit trail's service (AUDIT_GRPC_TARGET): the Full profile's /api/v1/audit-events. */
    readonly audit: string;
    /** Identity's OpenID provider listener (IDENTITY_OP_URL), proxied at /oidc/* and discovery (Full profile). */
    readonly identityOp: string;
  };
  /** Deadline of a call to a service (ms). */
  readonly upstreamTimeoutMs: number;
  /**
   * Deadline of a request proxied to the OpenID provider (ms; IDENTITY_OP_TIMEOUT_MS, by default
   * UPSTREAM_TIMEOUT_MS): no answer by then is a 504. The provider is told what is left of it.
   */
  readonly identityOpTimeoutMs: number;
  /**
   * TRUST_PROXY: whose X-Forwarded-For, -Proto and -Host the gateway believes (the client's
   * address for the rate limits and the audit trail; https, which the provider's endpoints and
   * Secure cookies and HSTS follow): nobody (false), any sender (true), or only a request arriving
   * from one of these addresses or CIDRs (Fastify's trustProxy list; also `loopback`,
   * `linklocal`, `uniquelocal`), as Hydra's `allow_termination_from`.
   */
  readonly trustProxy: boolean | readonly string[];
  /**
   * Strict-Transport-Security (RFC 6797), sent only on responses to https requests (§7.2):
   * `maxAgeSeconds` 0 = never sent.
   */
  readonly hsts: { readonly maxAgeSeconds: number; readonly includeSubDomains: boolean; readonly preload: boolean };
  /** Browser origins allowed to call the API (CORS); empty = no CORS headers at all. */
  readonly corsOrigins: readonly string[];
  /** Rate-limit counters shared by every replica through Redis; unset = in this process only. */
  readonly redis: { readonly url?: string; readonly keyPrefix: string };
  /** PUBLIC_URL: a DPoP proof's `htu` may name the request by it (as well as by the URI it reached the gateway with). */
  readonly publicUrl?: string;
  /** Mean event-loop delay (over a second) beyond which requests get 503 + Retry-After (ms); 0 = off. */
  readonly maxEventLoopDelayMs: number;
  /** The admin console at /console (Full profile): its built files, or a Vite dev server to proxy to. */
  readonly console: { readonly dir: string; readonly devUrl?: string };
  /**
   * The read cache of single resources by id (cache/read-cache.ts): on unless
   * GATEWAY_READ_CACHE=false; entries live at most `ttlMs` (the backstop behind the events).
   */
  readonly readCache: { readonly enabled: boolean; readonly ttlMs: number; readonly maxEntries: number };
  /** What an acceptable access token looks like (must match the identity service). */
  readonly jwt: { readonly alg: JwtAlg; readonly issuer: string; readonly audience: string };
  /** The edge profile's GraphQL endpoint (/api/v1/graphql). */
  readonly graphql: {
    /**
     * Schema introspection (`__schema`, `__type`): `public`, `authenticated` (any valid bearer
     * token; anonymous callers are refused as with `off`) or `off`. `__typename` is always allowed.
     */
    readonly introspection: Introspection;
    /** GraphiQL at /graphiql: the console build's second entry (routes/console.ts), nothing from a CDN. */
    readonly ide: boolean;
    /** Deepest selection of data fields (introspection subtrees are bounded by the complexity instead). */
    readonly maxDepth: number;
    /** Upper bound of the fields a query may resolve, lists counted at their largest size (routes/edge/graphql/limits.ts). */
    readonly maxComplexity: number;
  };
  /**
   * Per-client limits of the anonymous token routes: at most `burst` requests in a window of
   * `burst / perMinute` minutes, so the sustained rate is `perMinute`.
   */
  readonly rateLimits: {
    readonly login: { readonly perMinute: number; readonly burst: number };
    readonly refresh: { readonly perMinute: number; readonly burst: number };
    readonly emailActions: { readonly perMinute: number; readonly burst: number };
    /** GraphQL checkouts (checkout, createOrder; at most one per request) per token subject. */
    readonly checkout: { readonly perMinute: number; readonly burst: number };
    /** The same checkouts per client address, whoever the subject: a ceiling for every shopper behind one address. */
    readonly checkoutAddress: { readonly perMinute: number; readonly burst: number };
    /** The provider's authorization requests (/oidc/auth, GET and POST, and their resumes): each stores an interaction. */
    readonly authorize: { readonly perMinute: number; readonly burst: number };
    /** Pushed authorization requests (/oidc/par): a client's back end, for all of its users. */
    readonly par: { readonly perMinute: number; readonly burst: number };
    /** The device flow's anonymous routes (/oidc/device/auth and the user's /oidc/device pages). */
    readonly device: { readonly perMinute: number; readonly burst: number };
    /** Passkey registration options (/me/passkeys/options: a stored challenge each), per token subject. */
    readonly passkeyOptions: { readonly perMinute: number; readonly burst: number };
    /** SCIM requests (/scim/v2/…) per bearer token: one SCIM connection's provisioning runs. */
    readonly scim: { readonly perMinute: number; readonly burst: number };
  };
}

/** Defaults the all-in-one process (make run) sets differently from a container. */
export interface GatewayDefaults {
  readonly host?: string;
  readonly requestLogLevel?: 'info' | 'debug';
}

/** PUBLIC_URL, by default `http://localhost:{PORT}`: the issuer (JWT_ISSUER's default), as identity reads it. */
export function readPublicUrl(e: EnvReader): string {
  const port = e.port('PORT', { default: 8080, allowZero: true });
  return (e.optionalUrl('PUBLIC_URL', ['http', 'https']) ?? `http://localhost:${port}`).replace(/\/+$/, '');
}

export function readGatewayConfig(e: EnvReader, defaults: GatewayDefaults = {}): GatewayConfig {
  const publicUrl = readPublicUrl(e);
  const upstreamTimeoutMs = e.int('UPSTREAM_TIMEOUT_MS', { default: 5_000, min: 100, max: 120_000 });
  return {
    host: e.string('HOST', { default: defaults.host ?? '0.0.0.0' }),
    requestLogLevel: e.oneOf('GATEWAY_REQUEST_LOG_LEVEL', ['info', 'debug'] as const, { default: defaults.requestLogLevel ?? 'info' }),
    port: e.port('PORT', { default: 8080, allowZero: true }),
    listenBacklog: e.int('GATEWAY_LISTEN_BACKLOG', { default: 4096, min: 1, max: 65_535 }),
    opsPort: e.port('GATEWAY_OPS_PORT', { default: 0, allowZero: true }),
    profiles: e.list('GATEWAY_PROFILES', PROFILES, { default: PROFILES }),
    upstreams: {
      identity: e.string('IDENTITY_GRPC_TARGET', { default: '127.0.0.1:50051' }),
      directory: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
      notification: e.string('NOTIFICATION_GRPC_TARGET', { default: '127.0.0.1:50053' }),
      commerce: e.string('COMMERCE_GRPC_TARGET', { default: '127.0.0.1:50054' }),
      audit: e.string('AUDIT_GRPC_TARGET', { default: '127.0.0.1:50055' }),
      identityOp: e.url('IDENTITY_OP_URL', ['http', 'https'], { default: 'http://127.0.0.1:50061' }),
    },
    upstreamTimeoutMs,
    identityOpTimeoutMs: e.int('IDENTITY_OP_TIMEOUT_MS', { default: upstreamTimeoutMs, min: 100, max: 120_000 }),
    trustProxy: readTrustProxy(e),
    hsts: readHsts(e),
    corsOrigins: readOrigins(e),
    redis: { url: e.optionalUrl('REDIS_URL', ['redis', 'rediss']), keyPrefix: e.string('REDIS_KEY_PREFIX', { default: 'iam:rate-limit:' }) },
    publicUrl,
    maxEventLoopDelayMs: e.int('MAX_EVENT_LOOP_DELAY_MS', { default: 1_000, min: 0, max: 60_000 }),
    console: {
      // gateway/src or gateway/dist → console/dist
      dir: e.string('CONSOLE_DIR', { default: join(__dirname, '..', '..', 'console', 'dist') }),
      devUrl: e.optionalUrl('CONSOLE_DEV_URL', ['http', 'https']),
    },
    readCache: {
      enabled: e.bool('GATEWAY_READ_CACHE', { default: true }),
      ttlMs: e.int('GATEWAY_READ_CACHE_TTL_MS', { default: 30_000, min: 100, max: 3_600_000 }),
      maxEntries: e.int('GATEWAY_READ_CACHE_MAX_ENTRIES', { default: 10_000, min: 1, max: 10_000_000 }),
    },
    jwt: {
      alg: e.oneOf('JWT_ALG', JWT_ALGS, { default: 'EdDSA' }),
      issuer: e.string('JWT_ISSUER', { default: publicUrl }),
      audience: e.string('JWT_AUDIENCE', { default: 'iam-api' }),
    },
    graphql: {
      introspection: e.oneOf('GRAPHQL_INTROSPECTION', INTROSPECTION, { default: 'authenticated' }),
      ide: e.bool('GRAPHQL_IDE', { default: false }),
      maxDepth: e.int('GRAPHQL_MAX_DEPTH', { default: 8, min: 2, max: 100 }),
      maxComplexity: e.int('GRAPHQL_MAX_COMPLEXITY', { default: 50_000, min: 100, max: 10_000_000 }),
    },
    rateLimits: {
      login: {
        perMinute: e.int('RATE_LIMIT_LOGIN_PER_MINUTE', { default: 120, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_LOGIN_BURST', { default: 100, min: 1, max: 10_000_000 }),
      },
      refresh: {
        perMinute: e.int('RATE_LIMIT_REFRESH_PER_MINUTE', { default: 300, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_REFRESH_BURST', { default: 100, min: 1, max: 10_000_000 }),
      },
      emailActions: {
        perMinute: e.int('RATE_LIMIT_EMAIL_ACTIONS_PER_MINUTE', { default: 30, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_EMAIL_ACTIONS_BURST', { default: 30, min: 1, max: 10_000_000 }),
      },
      checkout: {
        perMinute: e.int('RATE_LIMIT_CHECKOUT_PER_MINUTE', { default: 60, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_CHECKOUT_BURST', { default: 30, min: 1, max: 10_000_000 }),
      },
      checkoutAddress: {
        perMinute: e.int('RATE_LIMIT_CHECKOUT_ADDRESS_PER_MINUTE', { default: 600, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_CHECKOUT_ADDRESS_BURST', { default: 300, min: 1, max: 10_000_000 }),
      },
      authorize: {
        perMinute: e.int('RATE_LIMIT_AUTHORIZE_PER_MINUTE', { default: 120, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_AUTHORIZE_BURST', { default: 60, min: 1, max: 10_000_000 }),
      },
      par: {
        perMinute: e.int('RATE_LIMIT_PAR_PER_MINUTE', { default: 300, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_PAR_BURST', { default: 100, min: 1, max: 10_000_000 }),
      },
      device: {
        perMinute: e.int('RATE_LIMIT_DEVICE_PER_MINUTE', { default: 60, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_DEVICE_BURST', { default: 30, min: 1, max: 10_000_000 }),
      },
      passkeyOptions: {
        perMinute: e.int('RATE_LIMIT_PASSKEY_OPTIONS_PER_MINUTE', { default: 20, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_PASSKEY_OPTIONS_BURST', { default: 10, min: 1, max: 10_000_000 }),
      },
      scim: {
        perMinute: e.int('RATE_LIMIT_SCIM_PER_MINUTE', { default: 1_200, min: 1, max: 10_000_000 }),
        burst: e.int('RATE_LIMIT_SCIM_BURST', { default: 600, min: 1, max: 10_000_000 }),
      },
    },
  };
}

/** The names proxy-addr (Fastify's trustProxy) accepts for address ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** `TRUST_PROXY`: true, false, or a comma list of IP addresses and CIDRs (or loopback, linklocal, uniquelocal). */
function readTrustProxy(e: EnvReader): boolean | string[] {
  const raw = (e.optionalString('TRUST_PROXY') ?? '').trim();
  if (raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  const entries = raw.split(',').map((x) => x.trim()).filter(Boolean);
  for (const x of entries) {
    if (!isAddressOrCidr(x)) e.problem('TRUST_PROXY', `"${x}" is not an IP address or CIDR (true, false, or a comma list such as 10.0.0.0/8,fd00::/8)`);
  }
  return entries;
}

function isAddressOrCidr(x: string): boolean {
  if (PROXY_RANGE_NAMES.includes(x)) return true;
  const [addr, bits, ...rest] = x.split('/');
  const family = isIP(addr ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** HSTS_MAX_AGE (seconds; 0 = off), HSTS_INCLUDE_SUBDOMAINS, HSTS_PRELOAD (needs both others, RFC 6797 and the preload list's rules). */
function readHsts(e: EnvReader): GatewayConfig['hsts'] {
  const maxAgeSeconds = e.int('HSTS_MAX_AGE', { default: 31_536_000, min: 0, max: 63_072_000 });
  const includeSubDomains = e.bool('HSTS_INCLUDE_SUBDOMAINS', { default: true });
  const preload = e.bool('HSTS_PRELOAD', { default: false });
  if (preload && (!includeSubDomains || maxAgeSeconds < 31_536_000)) e.problem('HSTS_PRELOAD', 'needs HSTS_INCLUDE_SUBDOMAINS=true and HSTS_MAX_AGE of at least 31536000 (one year)');
  return { maxAgeSeconds, includeSubDomains, preload };
}

/** `CORS_ORIGINS`: a comma list of origins (`scheme://host[:port]`, no path). */
function readOrigins(e: EnvReader): string[] {
  const raw = e.optionalString('CORS_ORIGINS') ?? '';
  const origins = raw.split(',').map((o) => o.trim()).filter(Boolean);
  for (const o of origins) {
    let ok = false;
    try {
      const u = new URL(o);
      ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o.replace(/\/$/, '');
    } catch {
      ok = false;
    }
    if (!ok) e.problem('CORS_ORIGINS', `"${o}" is not an origin (scheme://host[:port])`);
  }
  return origins.map((o) => o.replace(/\/$/, ''));
}
