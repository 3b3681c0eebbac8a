/**
 * The edge profile's test harness (edge.test.ts, edge-config.test.ts): commerce faked at the gRPC
 * level (a checkout places a canned order, the order list is empty), a gateway built over it with
 * a fake authenticator, and callers whose every response is checked against the edge OpenAPI
 * document. Test code only: left out of the build (gateway/tsconfig.json).
 */
import { commerceV1 } from '@iam/contracts';
import { type AccessClaims, AppError, HealthMonitor, readConfig } from '@iam/platform';
import { GrpcHealth, bindService, startGrpcServer } from '@iam/platform/grpc';
import { TEST_CALL_KEY, eventually, testBus, testLogger, testMetrics, testSigner } from '@iam/platform/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import { ResponseChecker } from '../docs/response-check';
import { type Upstreams, createUpstreams } from '../upstreams';

const logger = testLogger();

function claims(over: Partial<AccessClaims> = {}): AccessClaims {
  const now = Math.floor(Date.now() / 1000);
  const sub = over.sub ?? randomUUID();
  return { sub, jti: randomUUID(), iss: 'iam', aud: ['iam-api'], iat: now, nbf: now, exp: now + 300, email: `${sub}@example.com`, roles: [], permissions: [], ...over };
}

export const TOKENS = {
  alice: claims(),
  bob: claims(),
  admin: claims({ roles: ['Administrator'] }),
  carol: claims(),
  dave: claims(),
  erin: claims(),
};
export type Who = keyof typeof TOKENS;

const authenticator: Authenticator = {
  verify: async (token) => {
    const c = TOKENS[token as Who];
    if (!c) throw AppError.unauthenticated('The access token is not valid.');
    return c;
  },
};

export interface Gql {
  status: number;
  headers: LightMyRequestResponse['headers'];
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- GraphQL data is checked field by field
  errors: Array<{ message: string; path?: Array<string | number>; extensions: { code: string; errors?: Array<{ field: string; message: string }> } }> | undefined;
  codes: string[];
  ms: number;
}

/**
 * Commerce at the gRPC level: serving (and its database), a checkout places a canned order, the
 * order list is empty; every other method answers UNIMPLEMENTED.
 */
export async function fakeCommerce(): Promise<{ target: string; close(): Promise<void> }> {
  const health = new GrpcHealth();
  const monitor = new HealthMonitor({ checks: { db: async () => undefined, bus: async () => undefined }, logger });
  health.follow(monitor);
  await monitor.refresh();
  const deps = { logger, metrics: testMetrics(), service: 'commerce', callKey: TEST_CALL_KEY };
  const order = (customerId: string): commerceV1.Order => {
    const [id, now] = [randomUUID(), new Date()];
    return { id, customerId, status: commerceV1.OrderStatus.ORDER_STATUS_CONFIRMED, lines: [], totalMinor: 0, currency: 'EUR', createdAt: now, updatedAt: now };
  };
  const orders = bindService(
    commerceV1.OrderServiceService,
    { checkout: async (r) => ({ order: order(r.customerId), replayed: false }), listOrders: async () => ({ orders: [], nextPageToken: '' }) },
    deps,
    // As the real one: the gateway's asserted calls only.
    ['gateway'],
  );
  const server = await startGrpcServer({ host: '127.0.0.1', port: 0, logger, health, bindings: [orders] });
  return { target: `127.0.0.1:${server.port}`, close: () => server.shutdown(1_000) };
}

export interface Gateway {
  app: FastifyInstance;
  upstreams: Upstreams;
  checker: ResponseChecker;
  close(): Promise<void>;
}

export async function gateway(env: Record<string, string>, opts = { commerceUp: true }): Promise<Gateway> {
  const config = readConfig({ GATEWAY_PROFILES: 'edge', MAX_EVENT_LOOP_DELAY_MS: '0', ...env }, readGatewayConfig);
  const metrics = testMetrics();
  const bus = testBus({ logger });
  const upstreams = createUpstreams(config, { metrics, bus, signer: testSigner('gateway') });
  const health = new HealthMonitor({ checks: upstreams.checks, logger });
  // The first check opens the gRPC connection; on a loaded machine that can take longer than a
  // check's timeout, so wait for commerce to be up, as a probe would, rather than trust the first
  // run. (The other upstreams are not running here: the edge profile does not need them.)
  const commerceUp = async () => Object.entries((await health.refresh()).checks).every(([k, v]) => !k.startsWith('commerce') || v === 'up');
  if (opts.commerceUp) await eventually(commerceUp, 20_000, 100);
  else await health.refresh();
  const app = await buildApp({ config, logger, metrics, health, upstreams, authenticator, denylist: new Denylist() });
  await app.ready();
  const doc = (await app.inject({ url: '/docs/edge/openapi.json' })).json<ConstructorParameters<typeof ResponseChecker>[0][number]>();
  const close = async () => {
    await app.close();
    upstreams.close();
    await bus.close();
  };
  return { app, upstreams, checker: new ResponseChecker([doc]), close };
}

/** HTTP and GraphQL callers; without `g`, they ask the gateway `current()` returns. */
export function edgeCallers(current: () => Gateway) {
  /** An HTTP call, its response checked against the edge OpenAPI document. */
  async function http(method: 'GET' | 'POST', url: string, opts: { payload?: unknown; headers?: Record<string, string>; g?: Gateway; from?: string } = {}): Promise<LightMyRequestResponse> {
    const g = opts.g ?? current();
    const res = await g.app.inject({ method, url, payload: opts.payload as string, headers: opts.headers, remoteAddress: opts.from });
    let body: unknown = res.body;
    try {
      body = res.body ? JSON.parse(res.body) : null;
    } catch {
      // text stays text
    }
    const problems = g.checker.check(method, `http://gw${url}`, res.statusCode, String(res.headers['content-type'] ?? '') || null, body);
    expect(problems).toEqual([]);
    return res;
  }

  /** `from`: the client's address (127.0.0.1 unless given). */
  async function gql(query: string, opts: { who?: Who; token?: string; variables?: Record<string, unknown>; g?: Gateway; from?: string } = {}): Promise<Gql> {
    const token = opts.token ?? opts.who;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const started = process.hrtime.bigint();
    const res = await http('POST', '/api/v1/graphql', { payload: JSON.stringify({ query, variables: opts.variables }), headers, g: opts.g, from: opts.from });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const body = res.json<{ data?: unknown; errors?: Gql['errors'] }>();
    expect(res.body).not.toMatch(/stack|\.ts:\d+|\.js:\d+|node_modules/);
    return { status: res.statusCode, headers: res.headers, data: body.data, errors: body.errors, codes: (body.errors ?? []).map((e) => e.extensions.code), ms };
  }
  return { http, gql };
}
