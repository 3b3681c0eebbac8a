/**
 * Optional TLS and mutual TLS for gRPC, from files (mounted secrets):
 *   GRPC_TLS_CERT_FILE + GRPC_TLS_KEY_FILE  this process's certificate: its gRPC listener speaks TLS,
 *                                           and it is presented as the client certificate when asked;
 *   GRPC_TLS_CA_FILE                        the trust anchor: clients use TLS and verify servers
 *                                           against it; servers require client certificates signed
 *                                           by it (mutual TLS).
 *   GRPC_TLS_PEER_NAMES                     with mutual TLS, which certificate each calling component
 *                                           must present: `gateway=<DNS name>,identity=<DNS name>,...`;
 *                                           a call whose assertion names a component is then accepted
 *                                           only over a connection whose client certificate carries that
 *                                           component's DNS name (so a component holding the shared call
 *                                           key cannot pass for another one).
 * Without them everything is plaintext (loopback, or a mesh that encrypts for us).
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { EnvReader } from '../config';

export interface GrpcTlsConfig {
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly caFile?: string;
  /** Component → the DNS name its client certificate must carry (GRPC_TLS_PEER_NAMES). */
  readonly peerNames?: Readonly<Record<string, string>>;
}

const PEER_NAMES_RE = /^[a-z][a-z0-9-]{0,62}=[A-Za-z0-9.-]{1,253}$/;

/** `gateway=iam-gateway.iam.svc.cluster.local,identity=...` → a map; undefined for a malformed list. */
export function parsePeerNames(raw: string): Record<string, string> | undefined {
  const entries = raw.split(',').map((p) => p.trim()).filter(Boolean);
  if (entries.length === 0 || !entries.every((p) => PEER_NAMES_RE.test(p))) return undefined;
  return Object.fromEntries(entries.map((p) => p.split('=') as [string, string]));
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
  const rawPeers = e.optionalString('GRPC_TLS_PEER_NAMES');
  let peerNames: Record<string, string> | undefined;
  if (rawPeers) {
    peerNames = parsePeerNames(rawPeers);
    if (!peerNames) e.problem('GRPC_TLS_PEER_NAMES', 'must be a comma list of component=dns-name');
    if (!caFile || !certFile) e.problem('GRPC_TLS_PEER_NAMES', 'needs mutual TLS (GRPC_TLS_CA_FILE, GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE)');
  }
  return { certFile, keyFile, caFile, ...(peerNames ? { peerNames } : {}) };
}

/**
 * Whether the client certificate of a call carries `component`'s DNS name (GRPC_TLS_PEER_NAMES);
 * true when no names are configured.
 */
export function peerIs(peerNames: Readonly<Record<string, string>> | undefined, component: string, auth: { sslPeerCertificate?: { subjectaltname?: string } } | null | undefined): boolean {
  if (!peerNames) return true;
  const expected = peerNames[component];
  const san = auth?.sslPeerCertificate?.subjectaltname;
  if (!expected || !san) return false;
  return san.split(', ').includes(`DNS:${expected}`);
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
