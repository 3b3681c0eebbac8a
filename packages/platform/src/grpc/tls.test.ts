/**
 * TLS and mutual TLS on the gRPC listeners and channels, with certificates made by openssl for
 * this test (a CA, a server certificate for 127.0.0.1, a client certificate).
 */
import { execSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { directoryV1, healthV1 } from '@iam/contracts';
import { HealthMonitor } from '../health';
import { readConfig } from '../config';
import { testLogger, testMetrics } from '../testing';
import { createGrpcClient } from './client';
import { GrpcHealth, type GrpcServerHandle, bindService, startGrpcServer } from './server';
import { type GrpcTlsConfig, grpcCredentials, parsePeerNames, readGrpcTlsConfig } from './tls';

const haveOpenssl = spawnSync('openssl', ['version']).status === 0;

/**
 * A call's deadline: a TLS handshake and a call, on a machine whose other test workers may hold
 * both cores (2 s was once not enough under make test). Refusals come long before it.
 */
const DEADLINE_MS = 8_000;
jest.setTimeout(60_000);

(haveOpenssl ? describe : describe.skip)('gRPC over TLS and mutual TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-tls-'));
  const f = (n: string) => join(dir, n);
  const logger = testLogger();
  const servers: GrpcServerHandle[] = [];

  beforeAll(() => {
    const sh = (cmd: string) => execSync(cmd, { cwd: dir, stdio: 'ignore', shell: '/bin/bash' });
    const key = (name: string) => sh(`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ${name}.key`);
    key('ca');
    sh('openssl req -x509 -new -key ca.key -out ca.crt -days 1 -subj /CN=iam-test-ca');
    for (const [name, san] of [['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], ['client', 'subjectAltName=DNS:gateway'], ['commerce', 'subjectAltName=DNS:iam-commerce.iam.svc']]) {
      key(name!);
      sh(`openssl req -new -key ${name}.key -out ${name}.csr -subj /CN=${name}`);
      sh(`openssl x509 -req -in ${name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out ${name}.crt -days 1 -extfile <(printf '%s' '${san}')`);
    }
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.shutdown(500)));
    rmSync(dir, { recursive: true, force: true });
  });

  const callKey = randomBytes(32);

  async function serve(tls: GrpcTlsConfig): Promise<number> {
    const monitor = new HealthMonitor({ logger, checks: {} });
    await monitor.refresh();
    const health = new GrpcHealth();
    health.follow(monitor);
    // A management method only the gateway may call, as the directory's are.
    const users = bindService(
      directoryV1.UserServiceService,
      { getUser: async (req, ctx) => directoryV1.User.fromPartial({ id: req.id, email: `${ctx.caller?.from ?? 'nobody'}@example.com` }) },
      { logger, metrics: testMetrics(), service: 'directory', callKey, peerNames: tls.peerNames },
      ['gateway'],
    );
    const s = await startGrpcServer({ host: '127.0.0.1', port: 0, bindings: [users], health, logger, credentials: grpcCredentials(tls).server });
    servers.push(s);
    return s.port;
  }

  const check = (port: number, tls: GrpcTlsConfig) => {
    const c = createGrpcClient(healthV1.HealthService, { target: `127.0.0.1:${port}`, metrics: testMetrics(), defaultDeadlineMs: DEADLINE_MS, credentials: grpcCredentials(tls).client });
    return c.call.check({ service: '' }).finally(() => c.close());
  };

  it('mutual TLS: a client with a certificate from the CA gets in; one without, or in plaintext, does not', async () => {
    const port = await serve({ certFile: f('server.crt'), keyFile: f('server.key'), caFile: f('ca.crt') });
    await expect(check(port, { caFile: f('ca.crt'), certFile: f('client.crt'), keyFile: f('client.key') })).resolves.toMatchObject({ status: 1 });
    await expect(check(port, { caFile: f('ca.crt') })).rejects.toMatchObject({ code: expect.stringMatching(/UNAVAILABLE|TIMEOUT/) });
    await expect(check(port, {})).rejects.toMatchObject({ code: expect.stringMatching(/UNAVAILABLE|TIMEOUT|INTERNAL/) });
  });

  it('TLS without client certificates: the client verifies the server against the CA', async () => {
    const port = await serve({ certFile: f('server.crt'), keyFile: f('server.key') });
    await expect(check(port, { caFile: f('ca.crt') })).resolves.toMatchObject({ status: 1 });
    await expect(check(port, {})).rejects.toBeDefined();
  });

  it('configuration: certificate and key go together; unreadable files are named', () => {
    expect(() => readConfig({ GRPC_TLS_CERT_FILE: f('server.crt') }, readGrpcTlsConfig)).toThrow(/GRPC_TLS_KEY_FILE/);
    expect(() => readConfig({ GRPC_TLS_CA_FILE: f('missing.crt') }, readGrpcTlsConfig)).toThrow(/GRPC_TLS_CA_FILE: cannot read/);
  });

  it('GRPC_TLS_PEER_NAMES: an assertion counts only over the named component\'s certificate (a holder of the call key cannot pass for the gateway)', async () => {
    const peerNames = { gateway: 'gateway', commerce: 'iam-commerce.iam.svc' };
    const port = await serve({ certFile: f('server.crt'), keyFile: f('server.key'), caFile: f('ca.crt'), peerNames });
    const getUser = (cert: string, from: string) => {
      const c = createGrpcClient(directoryV1.UserServiceService, {
        target: `127.0.0.1:${port}`,
        metrics: testMetrics(),
        defaultDeadlineMs: DEADLINE_MS,
        credentials: grpcCredentials({ caFile: f('ca.crt'), certFile: f(`${cert}.crt`), keyFile: f(`${cert}.key`) }).client,
        assert: { signer: { key: callKey, from }, to: 'directory' },
      });
      return c.call.getUser({ id: 'u1' }).finally(() => c.close());
    };
    await expect(getUser('client', 'gateway')).resolves.toMatchObject({ email: 'gateway@example.com' });
    // Commerce holds the shared key, signs as the gateway: its certificate gives it away.
    await expect(getUser('commerce', 'gateway')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // As itself it is authenticated, and this method is not its to call.
    await expect(getUser('commerce', 'commerce')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('GRPC_TLS_PEER_NAMES: a comma list of component=dns-name, only with mutual TLS', () => {
    expect(parsePeerNames('gateway=iam-gateway.iam.svc.cluster.local, identity=iam-identity-grpc.iam.svc')).toEqual({ gateway: 'iam-gateway.iam.svc.cluster.local', identity: 'iam-identity-grpc.iam.svc' });
    expect(parsePeerNames('gateway')).toBeUndefined();
    expect(parsePeerNames('gateway=a b')).toBeUndefined();
    expect(() => readConfig({ GRPC_TLS_PEER_NAMES: 'gateway=gw' }, readGrpcTlsConfig)).toThrow(/GRPC_TLS_PEER_NAMES: needs mutual TLS/);
    expect(() => readConfig({ GRPC_TLS_PEER_NAMES: 'nonsense', GRPC_TLS_CA_FILE: f('ca.crt'), GRPC_TLS_CERT_FILE: f('server.crt'), GRPC_TLS_KEY_FILE: f('server.key') }, readGrpcTlsConfig)).toThrow(/GRPC_TLS_PEER_NAMES: must be/);
  });
});
