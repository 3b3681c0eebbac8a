import type { EnvReader } from '@iam/platform';

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
  };
}
