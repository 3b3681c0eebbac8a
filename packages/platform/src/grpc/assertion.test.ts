/**
 * Call assertions (issue #22, item 3): signed and verified, bound to their audience and lifetime;
 * a server takes the actor from a verified assertion only and answers nothing else.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { directoryV1 } from '@iam/contracts';
import { HealthMonitor } from '../health';
import { testLogger, testMetrics } from '../testing';
import { actingAs } from '../testing/calls';
import { CALL_ASSERTION_KEY, CALL_ASSERTION_LIFETIME_S, signCallAssertion, verifyCallAssertion } from './assertion';
import { createGrpcClient } from './client';
import { ANY_CALLER, GrpcHealth, type GrpcServerHandle, actorOf, bindService, startGrpcServer } from './server';

const KEY = randomBytes(32);
const ACTOR = randomUUID();

describe('call assertions', () => {
  it('sign → verify: the caller and the actor; without an actor, none', () => {
    expect(verifyCallAssertion(KEY, signCallAssertion(KEY, { from: 'gateway', to: 'directory', actor: ACTOR }), 'directory')).toEqual({ from: 'gateway', actor: ACTOR });
    expect(verifyCallAssertion(KEY, signCallAssertion(KEY, { from: 'identity', to: 'directory' }), 'directory')).toEqual({ from: 'identity' });
  });

  it('refused: another key, another audience, expired, from the future, altered, malformed, absent', () => {
    const now = Date.now();
    const ok = signCallAssertion(KEY, { from: 'gateway', to: 'directory', actor: ACTOR }, now);
    const [h, p, s] = ok.split('.') as [string, string, string];
    const forged = (claims: Record<string, unknown>) => `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    const cases: Array<[string, string | undefined, string, number?]> = [
      ['another key', signCallAssertion(randomBytes(32), { from: 'gateway', to: 'directory', actor: ACTOR }), 'directory'],
      ['another audience', ok, 'commerce'],
      ['expired', signCallAssertion(KEY, { from: 'gateway', to: 'directory' }, now - (CALL_ASSERTION_LIFETIME_S + 31) * 1000), 'directory'],
      ['from the future', signCallAssertion(KEY, { from: 'gateway', to: 'directory' }, now + 120_000), 'directory'],
      ['another actor, same signature', forged({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: randomUUID() }), 'directory'],
      ['alg none', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`, 'directory'],
      ['not a token', 'x.y', 'directory'],
      ['absent', undefined, 'directory'],
    ];
    const refusal = (token: string | undefined, to: string, at: number): string | undefined => {
      try {
        verifyCallAssertion(KEY, token, to, at);
        return undefined;
      } catch (e) {
        return (e as { code?: string }).code;
      }
    };
    for (const [name, token, to, at] of cases) expect({ name, error: refusal(token, to, at ?? now) }).toEqual({ name, error: 'UNAUTHENTICATED' });
  });

  describe('over gRPC: the actor comes from the assertion alone', () => {
    const logger = testLogger();
    const metrics = testMetrics();
    let server: GrpcServerHandle;
    let seenActor: string | undefined;

    beforeAll(async () => {
      const monitor = new HealthMonitor({ logger, checks: {} });
      await monitor.refresh();
      const health = new GrpcHealth();
      health.follow(monitor);
      server = await startGrpcServer({
        host: '127.0.0.1',
        port: 0,
        logger,
        health,
        bindings: [
          bindService(
            directoryV1.UserServiceService,
            {
              deleteUser: async (_r, ctx) => {
                seenActor = actorOf(ctx);
                return {};
              },
              getUser: async (r, ctx) => directoryV1.User.fromPartial({ id: r.id, email: actorOf(ctx) ?? '' }),
            },
            { logger, metrics, service: 'directory', callKey: KEY },
            { default: ['gateway'], getUser: ANY_CALLER },
          ),
        ],
      });
    });

    afterAll(async () => {
      await server.shutdown(1_000);
    });

    const target = () => `127.0.0.1:${server.port}`;
    /** A raw call with the metadata an attacker chooses. */
    const raw = (md: Record<string, string>): Promise<grpc.ServiceError | undefined> =>
      new Promise((resolve) => {
        const c = new grpc.Client(target(), grpc.credentials.createInsecure());
        const m = new grpc.Metadata();
        for (const [k, v] of Object.entries(md)) m.set(k, v);
        const def = directoryV1.UserServiceService.deleteUser;
        c.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, { id: randomUUID() }, m, (err) => {
          c.close();
          resolve(err ?? undefined);
        });
      });

    it('a forged actor header (the old iam-actor-sub) with no assertion is refused before the handler runs', async () => {
      seenActor = 'untouched';
      const err = await raw({ 'iam-actor-sub': ACTOR });
      expect(err?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(seenActor).toBe('untouched');
    });

    it('an assertion signed with another key, or for another service, is refused; another component is PERMISSION_DENIED', async () => {
      expect((await raw({ [CALL_ASSERTION_KEY]: signCallAssertion(randomBytes(32), { from: 'gateway', to: 'directory', actor: ACTOR }) }))?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect((await raw({ [CALL_ASSERTION_KEY]: signCallAssertion(KEY, { from: 'gateway', to: 'commerce', actor: ACTOR }) }))?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect((await raw({ [CALL_ASSERTION_KEY]: signCallAssertion(KEY, { from: 'commerce', to: 'directory', actor: ACTOR }) }))?.code).toBe(grpc.status.PERMISSION_DENIED);
    });

    it('the platform client signs for the request context; a header beside a valid assertion does not change the actor', async () => {
      const c = createGrpcClient(directoryV1.UserServiceService, { target: target(), metrics, assert: { signer: { key: KEY, from: 'gateway' }, to: 'directory' } });
      await actingAs(ACTOR, () => c.call.deleteUser({ id: randomUUID() }));
      expect(seenActor).toBe(ACTOR);
      c.close();
      const valid = signCallAssertion(KEY, { from: 'gateway', to: 'directory', actor: ACTOR });
      expect(await raw({ [CALL_ASSERTION_KEY]: valid, 'iam-actor-sub': randomUUID() })).toBeUndefined();
      expect(seenActor).toBe(ACTOR);
    });

    it('a method open to any caller answers without an assertion, with no actor', async () => {
      const c = createGrpcClient(directoryV1.UserServiceService, { target: target(), metrics });
      await expect(actingAs(ACTOR, () => c.call.getUser({ id: 'u' }))).resolves.toMatchObject({ id: 'u', email: '' });
      c.close();
    });
  });
});
