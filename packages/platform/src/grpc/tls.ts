/**
 * Optional TLS and mutual TLS for gRPC, from files (mounted secrets):
 *   GRPC_TLS_CERT_FILE + GRPC_TLS_KEY_FILE  this process's certificate: its gRPC listener speaks TLS,
 *                                           and it is presented as the client certificate when asked;
 *   GRPC_TLS_CA_FILE                        the trust anchor: clients use TLS and verify servers
 *                                           against it; servers require client certificates signed
 *                                           by it (mutual TLS).
 * Without them everything is plaintext (loopback, or a mesh that encrypts for us).
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { EnvReader } from '../config';

export interface GrpcTlsConfig {
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly caFile?: string;
}

export function readGrpcTlsConfig(e: EnvReader): GrpcTlsConfig {
  const certFile = e.optionalString('GRPC_TLS_CERT_FILE');
  const keyFile = e.optionalString('GRPC_TLS_KEY_FILE');
  const caFile = e.optionalString('GRPC_TLS_CA_FILE');
  if (Boolean(certFile) !== Boolean(keyFile)) e.problem(certFile ? 'GRPC_TLS_KEY_FILE' : 'GRPC_TLS_CERT_FILE', 'is required with the other one (certificate and key go together)');
  for (const [name, file] of [['GRPC_TLS_CERT_FILE', certFile], ['GRPC_TLS_KEY_FILE', keyFile], ['GRPC_TLS_CA_FILE', caFile]] as const) {
    if (!file) continue;
    try {
      readFileSync(file);
    } catch {
      e.problem(name, `cannot read ${file}`);
    }
  }
  return { certFile, keyFile, caFile };
}

export interface GrpcCredentials {
  /** Undefined = plaintext listener. */
  readonly server?: grpc.ServerCredentials;
  /** Undefined = plaintext channels. */
  readonly client?: grpc.ChannelCredentials;
}

export function grpcCredentials(tls: GrpcTlsConfig): GrpcCredentials {
  const ca = tls.caFile ? readFileSync(tls.caFile) : undefined;
  const cert = tls.certFile ? readFileSync(tls.certFile) : undefined;
  const key = tls.keyFile ? readFileSync(tls.keyFile) : undefined;
  return {
    server: cert && key ? grpc.ServerCredentials.createSsl(ca ?? null, [{ cert_chain: cert, private_key: key }], Boolean(ca)) : undefined,
    client: ca ? grpc.credentials.createSsl(ca, key ?? null, cert ?? null) : undefined,
  };
}
