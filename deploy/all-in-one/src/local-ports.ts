/**
 * Ports of the all-in-one process follow its one public port: with `PORT=9090 make run` the
 * gRPC ports move by the same step as PORT moved from 8080 (50051… → 51061…), and so do identity's
 * OpenID provider port (50061 → 51071) and the
 * embedded PostgreSQL (54329 → 55339), so a second copy needs only PORT and its own DATA_DIR.
 * Each `<SERVICE>_GRPC_PORT` / `EMBEDDED_PG_PORT` still wins when set. A port the step would push
 * out of range (or PORT=0) becomes 0 for gRPC, a free one chosen at start.
 */
import type { ServiceName } from './system';

export const DEFAULT_PORT = 8080;

const GRPC_BASE: Readonly<Record<ServiceName, number>> = {
  identity: 50051,
  directory: 50052,
  notification: 50053,
  commerce: 50054,
  audit: 50055,
};
const EMBEDDED_PG_BASE = 54329;
/** Identity's OpenID provider (HTTP, loopback; the gateway proxies it). */
const IDENTITY_OP_BASE = 50061;

export interface LocalPorts {
  readonly grpc: Readonly<Record<ServiceName, number>>;
  readonly embeddedPostgres: number;
  /** IDENTITY_OP_PORT's default. */
  readonly identityOp: number;
}

export function localPorts(port: number): LocalPorts {
  const step = port === 0 ? undefined : port - DEFAULT_PORT;
  const moved = (base: number): number | undefined => {
    if (step === undefined) return undefined;
    const p = base + step;
    return p >= 1024 && p <= 65_535 ? p : undefined;
  };
  const grpc = Object.fromEntries(Object.entries(GRPC_BASE).map(([s, base]) => [s, moved(base) ?? 0])) as Record<ServiceName, number>;
  return { grpc, embeddedPostgres: moved(EMBEDDED_PG_BASE) ?? EMBEDDED_PG_BASE, identityOp: moved(IDENTITY_OP_BASE) ?? 0 };
}
