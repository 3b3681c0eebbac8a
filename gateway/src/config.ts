import { type EnvReader, JWT_ALGS, type JwtAlg } from '@iam/platform';

export const PROFILES = ['full', 'compact', 'edge'] as const;
export type Profile = (typeof PROFILES)[number];

export interface GatewayConfig {
  readonly host: string;
  readonly port: number;
  /** Route groups to mount; empty = the Minimal profile (health and metrics only). */
  readonly profiles: readonly Profile[];
  readonly upstreams: {
    readonly identity: string;
    readonly directory: string;
    readonly notification: string;
  };
  /** Deadline of a call to a service (ms). */
  readonly upstreamTimeoutMs: number;
  /** Trust X-Forwarded-For from a proxy in front (for per-IP rate limits). */
  readonly trustProxy: boolean;
  /** What an acceptable access token looks like (must match the identity service). */
  readonly jwt: { readonly alg: JwtAlg; readonly issuer: string; readonly audience: string };
  /** Per-client limits of the anonymous token routes. */
  readonly rateLimits: {
    readonly login: { readonly perMinute: number; readonly burst: number };
    readonly refresh: { readonly perMinute: number; readonly burst: number };
    readonly emailActions: { readonly perMinute: number; readonly burst: number };
  };
}

export function readGatewayConfig(e: EnvReader): GatewayConfig {
  return {
    host: e.string('HOST', { default: '0.0.0.0' }),
    port: e.port('PORT', { default: 8080, allowZero: true }),
    profiles: e.list('GATEWAY_PROFILES', PROFILES, { default: PROFILES }),
    upstreams: {
      identity: e.string('IDENTITY_GRPC_TARGET', { default: '127.0.0.1:50051' }),
      directory: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
      notification: e.string('NOTIFICATION_GRPC_TARGET', { default: '127.0.0.1:50053' }),
    },
    upstreamTimeoutMs: e.int('UPSTREAM_TIMEOUT_MS', { default: 5_000, min: 100, max: 120_000 }),
    trustProxy: e.bool('TRUST_PROXY', { default: false }),
    jwt: {
      alg: e.oneOf('JWT_ALG', JWT_ALGS, { default: 'EdDSA' }),
      issuer: e.string('JWT_ISSUER', { default: 'iam' }),
      audience: e.string('JWT_AUDIENCE', { default: 'iam-api' }),
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
    },
  };
}
