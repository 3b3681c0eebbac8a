/**
 * Issue #22, item 3, against the real processes: a pod that can reach a service's gRPC port but
 * does not hold INTERNAL_CALL_KEY cannot act for anyone. The old actor header naming the
 * Administrator, an assertion signed with another key, or one for another service, is refused
 * before anything runs, and nothing is written; identity's open token checks still answer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { directoryV1, identityV1 } from '@iam/contracts';
import { CALL_ASSERTION_KEY, createGrpcClient, signCallAssertion } from '@iam/platform';
import { testMetrics } from '@iam/platform/testing';
import { ADMIN, Cluster, call, runnable, strongPassword } from './cluster';

(runnable ? describe : describe.skip)('fault: a caller without the internal call key', () => {
  let c: Cluster;
  let adminId: string;

  beforeAll(async () => {
    c = await Cluster.start();
    const login = await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN });
    adminId = login.json.user.id as string;
  });

  afterAll(async () => {
    await c?.shutdown();
  });

  /** A CreateUser straight to the directory's port with metadata of the attacker's choosing. */
  const createUser = (md: Record<string, string>, email: string): Promise<grpc.ServiceError | undefined> =>
    new Promise((resolve) => {
      const client = new grpc.Client(`127.0.0.1:${c.ports.directory}`, grpc.credentials.createInsecure());
      const m = new grpc.Metadata();
      for (const [k, v] of Object.entries(md)) m.set(k, v);
      const def = directoryV1.UserServiceService.createUser;
      const req = directoryV1.CreateUserRequest.fromPartial({ firstName: 'Mallory', lastName: 'M', email, password: strongPassword(), roles: ['Administrator'] });
      client.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, req, m, (err) => {
        client.close();
        resolve(err ?? undefined);
      });
    });

  it('forged actor header, foreign key, wrong audience, wrong component: refused, no user made', async () => {
    const email = `mallory-${randomUUID()}@example.com`;
    const attempts: Array<[string, Record<string, string>, grpc.status]> = [
      ['the old actor header naming the Administrator', { 'iam-actor-sub': adminId }, grpc.status.UNAUTHENTICATED],
      ['an assertion signed with another key', { [CALL_ASSERTION_KEY]: signCallAssertion(randomBytes(32), { from: 'gateway', to: 'directory', actor: adminId }) }, grpc.status.UNAUTHENTICATED],
      ['an assertion for another service', { [CALL_ASSERTION_KEY]: signCallAssertion(Buffer.from(c.env.INTERNAL_CALL_KEY!, 'base64'), { from: 'gateway', to: 'commerce', actor: adminId }) }, grpc.status.UNAUTHENTICATED],
      ['an assertion from a component that may not call it', { [CALL_ASSERTION_KEY]: signCallAssertion(Buffer.from(c.env.INTERNAL_CALL_KEY!, 'base64'), { from: 'notification', to: 'directory', actor: adminId }) }, grpc.status.PERMISSION_DENIED],
    ];
    for (const [what, md, code] of attempts) expect({ what, code: (await createUser(md, email))?.code }).toEqual({ what, code });
    const token = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const found = await call(c.url, 'GET', `/api/v1/users?q=${encodeURIComponent(email)}`, { token });
    expect(found.json.totalCount).toBe(0);
  });

  it('the gateway, holding the key, still acts for the user it verified; identity answers token checks to anyone', async () => {
    const token = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const made = await call(c.url, 'POST', '/api/v1/users', { token, body: { firstName: 'Ok', lastName: 'K', email: `ok-${randomUUID()}@example.com`, password: strongPassword() } });
    expect(made.status).toBe(201);
    const identity = createGrpcClient(identityV1.IdentityServiceService, { target: `127.0.0.1:${c.ports.identity}`, metrics: testMetrics() });
    await expect(identity.call.validateToken({ accessToken: token })).resolves.toMatchObject({ claims: { sub: adminId } });
    await expect(identity.call.listRevokedTokens({})).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    identity.close();
  });
});
