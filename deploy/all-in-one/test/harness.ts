/**
 * Starts the whole system in this process for end-to-end tests (startSystem, as `make run` does):
 * the five services and one or more gateway replicas, on fresh databases of the test PostgreSQL
 * and a private namespace of the test NATS (or the in-process bus), with cheap argon2 parameters.
 * Talks HTTP on real ports.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { readAuditConfig } from '@iam/audit';
import { readCommerceConfig } from '@iam/commerce';
import { type TxtResolver, readDirectoryConfig } from '@iam/directory';
import { ResponseChecker, type RunningGateway, readGatewayConfig } from '@iam/gateway';
import { type AuthFaults, type ClientLookup, type PresetEndpoints, readIdentityConfig } from '@iam/identity';
import { type MemoryMailbox, readNotificationConfig } from '@iam/notification';
import { type EventBus, JetStreamEventBus, Lifecycle, type RunningService, readConfig } from '@iam/platform';
import {
  type TestDatabase,
  createTestDatabase,
  deleteNamespaceStreams,
  eventually,
  testBus,
  testLogger,
  testMetrics,
  testNatsUrl,
  TEST_CALL_KEY,
} from '@iam/platform/testing';
import { SERVICES, startSystem } from '../src/system';

export const ADMIN = { email: 'admin@example.com', password: 'Admin-Passw0rd!' };

/** The edge profile mounted beside the others, its checkout limits out of the way (tests checking out a lot). */
export const EDGE_ENV: Readonly<Record<string, string>> = {
  GATEWAY_PROFILES: 'full,compact,edge',
  RATE_LIMIT_CHECKOUT_PER_MINUTE: '100000',
  RATE_LIMIT_CHECKOUT_BURST: '100000',
  RATE_LIMIT_CHECKOUT_ADDRESS_PER_MINUTE: '100000',
  RATE_LIMIT_CHECKOUT_ADDRESS_BURST: '100000',
};

/** Response checkers of the running systems, by gateway base URL (see http()). */
const checkers = new Map<string, ResponseChecker>();

export interface TestSystem {
  readonly gateways: RunningGateway[];
  readonly directory: RunningService;
  readonly identity: RunningService;
  readonly notification: RunningService;
  readonly commerce: RunningService;
  readonly audit: RunningService;
  readonly bus: EventBus;
  readonly kek: Buffer;
  readonly env: Readonly<Record<string, string>>;
  /** Base URL of gateway replica `i`. */
  url(i?: number): string;
  stop(): Promise<void>;
}

export async function startTestSystem(
  opts: {
    env?: Record<string, string>;
    gateways?: number;
    logLines?: string[];
    /** The development mailbox, as make run makes it with no SMTP_URL (needs EMAIL_ACTION_BASE_URL in env). */
    mailbox?: MemoryMailbox;
    /** The OpenID provider's clients, in place of the database's (tests with static clients). */
    identityClients?: ClientLookup;
    /** Fault hooks of identity (e.g. a delayed session write). */
    identityFaults?: AuthFaults;
    /** Where identity's GitHub and Google presets live (local stand-ins). */
    federationPresets?: PresetEndpoints;
    /** The directory's DNS TXT lookups (domain verification): a stub whose records the test sets. */
    directoryResolver?: TxtResolver;
  } = {},
): Promise<TestSystem> {
  const logger = opts.logLines ? pino({ level: 'debug' }, { write: (l: string) => void opts.logLines!.push(l) }) : testLogger();
  const metrics = testMetrics();
  const lifecycle = new Lifecycle(logger, 5_000);
  const dbs: Record<string, TestDatabase> = {};
  for (const name of SERVICES) dbs[name] = await createTestDatabase(`e2e_${name}`);
  const bus = testBus({ logger });
  const kek = randomBytes(32);
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    DIRECTORY_GRPC_PORT: '0',
    IDENTITY_GRPC_PORT: '0',
    NOTIFICATION_GRPC_PORT: '0',
    COMMERCE_GRPC_PORT: '0',
    AUDIT_GRPC_PORT: '0',
    ARGON2_MEMORY_KIB: '8192',
    ARGON2_ITERATIONS: '1',
    GATEWAY_PROFILES: 'full,compact',
    JWT_KEY_ENCRYPTION_KEY: kek.toString('base64'),
    OIDC_COOKIE_KEY: randomBytes(32).toString('base64'),
    IDENTITY_OP_PORT: '0',
    EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    AUDIT_CHECKPOINT_SIGNING_KEY: randomBytes(32).toString('base64'),
    // The audit trail's head signed soon after it moves (the default waits a minute).
    AUDIT_CHECKPOINT_INTERVAL_MS: '300',
    RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
    RATE_LIMIT_LOGIN_BURST: '100000',
    RATE_LIMIT_REFRESH_PER_MINUTE: '100000',
    RATE_LIMIT_REFRESH_BURST: '100000',
    RATE_LIMIT_EMAIL_ACTIONS_PER_MINUTE: '100000',
    RATE_LIMIT_EMAIL_ACTIONS_BURST: '100000',
    RATE_LIMIT_AUTHORIZE_PER_MINUTE: '100000',
    RATE_LIMIT_AUTHORIZE_BURST: '100000',
    RATE_LIMIT_PAR_PER_MINUTE: '100000',
    RATE_LIMIT_PAR_BURST: '100000',
    RATE_LIMIT_DEVICE_PER_MINUTE: '100000',
    RATE_LIMIT_DEVICE_BURST: '100000',
    RATE_LIMIT_PASSKEY_OPTIONS_PER_MINUTE: '100000',
    RATE_LIMIT_PASSKEY_OPTIONS_BURST: '100000',
    RATE_LIMIT_SCIM_PER_MINUTE: '100000',
    RATE_LIMIT_SCIM_BURST: '100000',
    // Two suites share two cores here: event-loop stalls are the test machine's, not load to shed.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...opts.env,
  };
  const config = readConfig(env, (e) => ({
    gateway: readGatewayConfig(e),
    directory: readDirectoryConfig(e, { databaseUrl: dbs.directory!.url }),
    identity: readIdentityConfig(e, { databaseUrl: dbs.identity!.url }),
    notification: readNotificationConfig(e, { databaseUrl: dbs.notification!.url }),
    commerce: readCommerceConfig(e, { databaseUrl: dbs.commerce!.url }),
    audit: readAuditConfig(e, { databaseUrl: dbs.audit!.url }),
  }));
  // Each replica beyond the first gets its own bus connection, as separate processes would.
  const extraBuses: EventBus[] = [];
  const gatewayBus = (i: number): EventBus => {
    if (i === 0 || !(bus instanceof JetStreamEventBus)) return bus;
    const b = new JetStreamEventBus({ url: testNatsUrl()!, name: `gateway-${i}`, namespace: bus.namespace, logger, metrics });
    extraBuses.push(b);
    return b;
  };
  // As in the all-in-one process: each service has metrics of its own (RunningService.metrics);
  // `metrics` is the gateways', what their public /metrics shows.
  // TEST_CALL_KEY: tests may call a service directly as one of the platform's components would.
  const system = await startSystem({
    config,
    logger,
    bus,
    lifecycle,
    gateways: opts.gateways,
    gatewayBus,
    gatewayMetrics: metrics,
    serviceMetrics: () => testMetrics(),
    admin: ADMIN,
    callKey: TEST_CALL_KEY,
    mailbox: opts.mailbox,
    identityClients: opts.identityClients,
    directoryResolver: opts.directoryResolver,
    identityFaults: opts.identityFaults,
    federationPresets: opts.federationPresets,
    // As make run: in process, unless E2E_TRANSPORT=grpc runs the suites over loopback gRPC.
    transport: process.env.E2E_TRANSPORT === 'grpc' ? 'grpc' : 'in-process',
  });
  const { gateways } = system;
  await eventually(async () => {
    const snaps = await Promise.all(gateways.map((g) => g.health.refresh()));
    return snaps.every((s) => s.ready);
  }, 15_000, 100);
  for (const g of gateways) {
    const base = `http://127.0.0.1:${g.port}`;
    const docs: ConstructorParameters<typeof ResponseChecker>[0] = [];
    for (const profile of config.gateway.profiles) {
      const r = await fetch(`${base}/docs/${profile}/openapi.json`);
      if (r.status === 200) docs.push((await r.json()) as (typeof docs)[number]);
    }
    if (docs.length > 0) checkers.set(base, new ResponseChecker(docs));
  }
  const s = system.services as Required<typeof system.services>;
  return {
    gateways,
    directory: s.directory,
    identity: s.identity,
    notification: s.notification,
    commerce: s.commerce,
    audit: s.audit,
    bus,
    kek,
    env,
    url: (i = 0) => `http://127.0.0.1:${gateways[i]!.port}`,
    stop: async () => {
      for (const g of gateways) checkers.delete(`http://127.0.0.1:${g.port}`);
      await lifecycle.shutdown('test done');
      await Promise.all(extraBuses.map((b) => b.close()));
      await bus.close();
      const url = testNatsUrl();
      if (url && bus instanceof JetStreamEventBus) await deleteNamespaceStreams(url, bus.namespace);
      for (const db of Object.values(dbs)) await db.drop();
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
}

export async function http(base: string, method: string, path: string, opts: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  } else if (opts.raw !== undefined) {
    body = opts.raw;
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  const problems = checkers.get(base)?.check(method, base + path, res.status, res.headers.get('content-type'), text ? json ?? text : null) ?? [];
  if (problems.length > 0) throw new Error(`response does not match the OpenAPI document:\n  ${problems.join('\n  ')}`);
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * A domain the organization claims and verifies through the API (issue #41), the system's stub
 * TXT resolver (`startTestSystem({ directoryResolver })`) answering its challenge: SCIM
 * provisions emails on the organization's verified domains only. Returns the domain's id.
 */
export async function verifiedDomain(base: string, token: string, organizationId: string, domain: string, dns: { readonly records: Map<string, string[]> }): Promise<string> {
  const claimed = await http(base, 'POST', `/api/v1/organizations/${organizationId}/domains`, { token, body: { domain } });
  if (claimed.status !== 201) throw new Error(`claiming ${domain}: ${claimed.status} ${claimed.text}`);
  const d = claimed.json as { id: string; domain: string; challenge: string };
  dns.records.set(`_iam-challenge.${d.domain}`, [d.challenge]);
  const verified = await http(base, 'POST', `/api/v1/organizations/${organizationId}/domains/${d.id}/verify`, { token });
  if ((verified.json as { status?: string } | null)?.status !== 'verified') throw new Error(`verifying ${domain}: ${verified.status} ${verified.text}`);
  return d.id;
}

/** Answers that say "not now": refused before anything was done (429, 503), or past the deadline (504: done or not). */
const NOT_NOW = new Set([429, 503, 504]);

/**
 * A test's setup step (the users, roles and logins it needs before what it checks), sent again
 * while the answer is "not now", after its Retry-After: on a loaded machine a step may miss its
 * deadline, and a test of something else must not fail for it, nor go on with a record it does
 * not have (issue #35: a user never made became a 400 on the wrong field). Only for steps that are
 * safe to repeat: reads, logins, and creations (`created` resolves a repeat that finds the record
 * made). On an idle machine it is one request.
 */
export async function persist(send: () => Promise<HttpResult>, attempts = 10): Promise<HttpResult> {
  for (let i = 1; ; i++) {
    const r = await send();
    if (!NOT_NOW.has(r.status) || i >= attempts) return r;
    await new Promise((resolve) => setTimeout(resolve, 1_000 * Math.min(5, Number(r.headers.get('retry-after')) || 1)));
  }
}

/**
 * Makes a record a test needs (POST `path`, a body with a unique name or email): its 201 body; when
 * an attempt missed its deadline but was done, its repeat is a 409 and the record is found by `q`.
 */
export async function created(base: string, path: string, body: Record<string, unknown>, opts: { token: string; q: string }): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- a resource's JSON, checked by the caller
  let missed = false;
  const r = await persist(async () => {
    const a = await http(base, 'POST', path, { token: opts.token, body });
    missed ||= a.status === 504;
    return a;
  });
  if (r.status === 201) return r.json;
  if (r.status === 409 && missed) {
    const found = await persist(() => http(base, 'GET', `${path}?q=${encodeURIComponent(opts.q)}&pageSize=2`, { token: opts.token }));
    if (found.status === 200 && found.json.items.length === 1) return found.json.items[0];
  }
  throw new Error(`POST ${path}: ${r.status} ${r.text}`);
}

/** Signs in (a setup step: see persist); the login answer. */
export async function signedIn(base: string, email: string, password: string): Promise<{ id: string; token: string; refreshToken: string }> {
  const r = await persist(() => http(base, 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } }));
  if (r.status !== 200) throw new Error(`login: ${r.status} ${r.text}`);
  return { id: r.json.user.id as string, token: r.json.token as string, refreshToken: r.json.refreshToken as string };
}

let seq = 0;
export function uniqueEmail(tag = 'u'): string {
  return `e2e-${tag}-${Date.now().toString(36)}-${++seq}-${randomBytes(3).toString('hex')}@example.com`;
}

export function strongPassword(): string {
  return `E2e!${randomBytes(8).toString('hex')}#Aa9`;
}

export interface GqlError {
  message: string;
  path?: Array<string | number>;
  extensions: { code: string; errors?: Array<{ field: string; message: string }> };
}

export interface GqlResult {
  status: number;
  headers: Headers;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- GraphQL data is checked field by field
  errors: GqlError[] | undefined;
  /** `errors[].extensions.code` of the answer. */
  codes: string[];
}

/** A GraphQL operation on the edge profile's /api/v1/graphql. */
export async function gql(base: string, query: string, opts: { token?: string; variables?: Record<string, unknown> } = {}): Promise<GqlResult> {
  const r = await http(base, 'POST', '/api/v1/graphql', { body: { query, variables: opts.variables }, token: opts.token });
  const errors: GqlError[] | undefined = r.json?.errors;
  return { status: r.status, headers: r.headers, data: r.json?.data, errors, codes: (errors ?? []).map((e) => e.extensions.code) };
}

export interface SignedIn {
  readonly id: string;
  readonly email: string;
  readonly token: string;
}

/**
 * A new user holding `permissions` through a new role of their own (made by `adminToken` through
 * the Full profile), signed in: the token carries those permissions.
 */
export async function userHolding(base: string, adminToken: string, permissions: readonly string[]): Promise<SignedIn & { roleId: string; roleName: string; password: string }> {
  const roleName = `holders-${randomBytes(4).toString('hex')}`;
  const role = await created(base, '/api/v1/roles', { name: roleName, description: permissions.join(', ') }, { token: adminToken, q: roleName });
  for (const name of permissions) {
    const found = await persist(() => http(base, 'GET', `/api/v1/permissions?q=${encodeURIComponent(name)}`, { token: adminToken }));
    const permissionId = (found.json.items as Array<{ id: string; name: string }>).find((x) => x.name === name)!.id;
    const link = await persist(() => http(base, 'POST', '/api/v1/role-permissions', { token: adminToken, body: { roleId: role.id, permissionId } }));
    // 409: a repeat after a missed deadline found the link made.
    if (link.status !== 201 && link.status !== 409) throw new Error(`link: ${link.status} ${link.text}`);
  }
  const email = uniqueEmail('holder');
  const password = strongPassword();
  const user = await created(base, '/api/v1/users', { firstName: 'Holder', lastName: 'Of Rights', email, password, roles: [role.name] }, { token: adminToken, q: email });
  const login = await signedIn(base, email, password);
  return { id: user.id, email, password, token: login.token, roleId: role.id, roleName: role.name };
}
