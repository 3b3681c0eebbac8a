/**
 * A small typed client for internal services that need to know who a caller is. It talks to the
 * identity service over gRPC (plaintext, TLS or mutual TLS) and depends on nothing but the
 * generated contracts and @grpc/grpc-js.
 *
 *   const identity = createIdentityClient({ target: 'identity:50051' });
 *   const claims = await identity.validateToken(bearerToken); // throws IdentityClientError UNAUTHENTICATED
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { identityV1 } from '@iam/contracts';

export type Claims = identityV1.Claims;
export type Jwk = identityV1.Jwk;

export interface IdentityClientOptions {
  /** host:port of the identity service. */
  readonly target: string;
  /**
   * TLS: `caFile` verifies the server; `certFile` + `keyFile` are this caller's certificate when
   * the server asks for one (mutual TLS). Omit for plaintext.
   */
  readonly tls?: { readonly caFile: string; readonly certFile?: string; readonly keyFile?: string };
  /** Deadline of each call (ms, default 2000). */
  readonly deadlineMs?: number;
}

/** A failed call: `code` is the gRPC status name (UNAUTHENTICATED, UNAVAILABLE, DEADLINE_EXCEEDED…). */
export class IdentityClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'IdentityClientError';
  }
}

export interface IdentityClient {
  /** The token's claims when its signature, expiry, issuer, audience and revocation check out. */
  validateToken(accessToken: string): Promise<Claims>;
  /** RFC 7662 style: `{ active: false }` for any token that is not valid (no error). */
  introspect(token: string): Promise<{ active: true; claims: Claims } | { active: false }>;
  /** The public keys, to verify tokens locally (cache them; refetch on an unknown kid). */
  getJwks(): Promise<Jwk[]>;
  close(): void;
}

export function createIdentityClient(opts: IdentityClientOptions): IdentityClient {
  const credentials = opts.tls
    ? grpc.credentials.createSsl(
        readFileSync(opts.tls.caFile),
        opts.tls.keyFile ? readFileSync(opts.tls.keyFile) : null,
        opts.tls.certFile ? readFileSync(opts.tls.certFile) : null,
      )
    : grpc.credentials.createInsecure();
  const client = new identityV1.IdentityServiceClient(opts.target, credentials);
  const deadline = () => new Date(Date.now() + (opts.deadlineMs ?? 2_000));
  const call = <Res>(invoke: (md: grpc.Metadata, o: Partial<grpc.CallOptions>, cb: (e: grpc.ServiceError | null, r: Res) => void) => unknown) =>
    new Promise<Res>((resolve, reject) => {
      invoke(new grpc.Metadata(), { deadline: deadline() }, (err, res) =>
        err ? reject(new IdentityClientError(grpc.status[err.code] ?? 'UNKNOWN', err.details || err.message)) : resolve(res),
      );
    });
  return {
    async validateToken(accessToken) {
      const r = await call<identityV1.ValidateTokenResponse>((md, o, cb) => client.validateToken({ accessToken }, md, o, cb));
      return r.claims!;
    },
    async introspect(token) {
      const r = await call<identityV1.IntrospectResponse>((md, o, cb) => client.introspect({ token }, md, o, cb));
      return r.active && r.claims ? { active: true, claims: r.claims } : { active: false };
    },
    async getJwks() {
      const r = await call<identityV1.GetJwksResponse>((md, o, cb) => client.getJwks({}, md, o, cb));
      return r.keys;
    },
    close: () => client.close(),
  };
}
