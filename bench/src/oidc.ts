/**
 * Scenario 11, the OpenID provider (issue #28), through the gateway of the bench's system:
 *   11a. `client_credentials` grants/s (a service account made through /api/v1/clients, one role),
 *   11b. OP refresh grants/s (each worker rotates its own chain, started by a sign-in through the
 *        hosted pages),
 * each against the library's floor in the same run (oidc-floor.ts: a bare oidc-provider, its
 * in-memory adapter, a static client) and the bare pipeline, and per vCPU against Keycloak's
 * sizing guide (120 client-credentials grants/s and 120 refreshes/s per vCPU).
 */
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { type JsonAnswer, type LoadResult, type ScenarioRow, cannon, closedLoop, httpClient, r1, r2 } from './load';
import { organizationTokenScenario } from './oidc-organizations';

/** The floor's one client (static, in oidc-floor.ts). */
export const FLOOR_CLIENT = { id: 'floor', secret: 'floor-secret-floor-secret-floor-secret' };

const KEYCLOAK_PER_VCPU = 120;
export const CONNECTIONS = 16;
const REDIRECT = 'http://127.0.0.1:9/cb';

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** Form posts to a token endpoint over node:http with keep-alive (fetch costs the shared cores ~10× more). */
export function formClient(base: string, connections: number): { post(path: string, form: Record<string, string>, authorization: string): Promise<JsonAnswer>; close(): void } {
  const http = httpClient(base, connections);
  return {
    post: (path, form, authorization) => http.send('POST', path, { authorization, 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams(form).toString()),
    close: () => http.close(),
  };
}

/**
 * A sign-in through the hosted pages over plain HTTP (cookies kept, forms posted, consent
 * allowed), then the code exchanged: answers the grant's refresh token.
 */
export async function opRefreshToken(base: string, client: { id: string; secret: string }, user: { email: string; password: string }, scope = 'openid offline_access'): Promise<string> {
  const jar = new Map<string, string>();
  const verifier = randomBytes(32).toString('base64url');
  const auth = new URL(`${base}/oidc/auth`);
  for (const [k, v] of Object.entries({
    client_id: client.id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope,
    prompt: 'consent',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
  })) {
    auth.searchParams.set(k, v);
  }
  let url = auth.href;
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(REDIRECT)) {
      const code = new URL(url).searchParams.get('code');
      if (!code) throw new Error(`no code: ${url}`);
      const r = await fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { authorization: basic(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
      });
      const json = (await r.json()) as { refresh_token?: string };
      if (!json.refresh_token) throw new Error(`no refresh token (${r.status})`);
      return json.refresh_token;
    }
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const text = await res.text();
    const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&');
    if (res.status === 200 && action?.endsWith('/login')) {
      url = new URL(action, url).href;
      method = 'POST';
      body = new URLSearchParams(user).toString();
      continue;
    }
    if (res.status === 200 && action?.endsWith('/consent')) {
      url = new URL(action, url).href;
      method = 'POST';
      body = 'decision=allow';
      continue;
    }
    throw new Error(`sign-in stopped at ${url} (${res.status})`);
  }
  throw new Error('too many redirects');
}

/** Refresh grants/s: each worker rotates its own chain, so no refresh token is presented twice. */
export async function refreshLoop(base: string, path: string, client: { id: string; secret: string }, chains: string[], seconds: number): Promise<LoadResult> {
  const http = formClient(base, chains.length);
  const authorization = basic(client.id, client.secret);
  try {
    return await closedLoop(seconds, chains.length, async (worker) => {
      const r = await http.post(path, { grant_type: 'refresh_token', refresh_token: chains[worker]! }, authorization);
      if (r.status === 200 && typeof r.json.refresh_token === 'string') chains[worker] = r.json.refresh_token;
      return r.status;
    });
  } finally {
    http.close();
  }
}

const clientCredentials = (url: string, client: { id: string; secret: string }, seconds: number) =>
  cannon({
    url,
    method: 'POST',
    headers: { authorization: basic(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
    connections: CONNECTIONS,
    duration: seconds,
  });

export interface OidcScenarioOptions {
  /** The system's gateway. */
  base: string;
  /** The floor (oidc-floor.js). */
  floorBase: string;
  adminToken: string;
  user: { email: string; password: string };
  /** The bare pipeline's req/s measured in this run (NaN when not measured). */
  bareOk: number;
  seconds: number;
  repeat: (fn: () => Promise<LoadResult>) => Promise<LoadResult>;
  log: (s: string) => void;
}

export async function oidcScenarios(opts: OidcScenarioOptions): Promise<ScenarioRow[]> {
  const vcpus = availableParallelism();
  const create = async (body: Record<string, unknown>) => {
    const r = await fetch(`${opts.base}/api/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.adminToken}` },
      body: JSON.stringify({ name: `bench ${randomBytes(4).toString('hex')}`, type: 'confidential', redirectUris: [], postLogoutRedirectUris: [], ...body }),
    });
    const json = (await r.json()) as { clientId?: string; clientSecret?: string };
    if (r.status !== 201 || !json.clientId || !json.clientSecret) throw new Error(`client not created (${r.status})`);
    return { id: json.clientId, secret: json.clientSecret };
  };
  // A service account as deployments have them: one role, whose permissions go into each token.
  const service = await create({ grantTypes: ['client_credentials'], roles: ['Administrator'] });
  const app = await create({ grantTypes: ['authorization_code', 'refresh_token'], redirectUris: [REDIRECT] });
  const bare = Number.isNaN(opts.bareOk) ? '' : `; bare pipeline ${r1(opts.bareOk)}/s`;
  const rows: ScenarioRow[] = [];

  opts.log('\n11a. client_credentials grants/s vs the bare oidc-provider');
  const floorCc = await opts.repeat(() => clientCredentials(`${opts.floorBase}/token`, FLOOR_CLIENT, opts.seconds));
  const cc = await opts.repeat(() => clientCredentials(`${opts.base}/oidc/token`, service, opts.seconds));
  const ccPerVcpu = cc.ok / vcpus;
  rows.push({
    scenario: `11a. client_credentials grants/s ÷ bare oidc-provider (in-memory adapter, static client), ${CONNECTIONS} connections`,
    value: `${r1(cc.ok)}/s (p99 ${r1(cc.p99)} ms, ${cc.non2xx} non-2xx; ${r1(ccPerVcpu)}/s per vCPU = ${r2(ccPerVcpu / KEYCLOAK_PER_VCPU)}× Keycloak's ${KEYCLOAK_PER_VCPU})`,
    baseline: `floor ${r1(floorCc.ok)}/s (p99 ${r1(floorCc.p99)} ms)${bare}`,
    ratio: r2(cc.ok / floorCc.ok),
    target: '≥ 0.25 and ≥ 1,000/s',
    met: cc.ok / floorCc.ok >= 0.25 && cc.ok >= 1_000,
  });
  opts.log(`   floor ${r1(floorCc.ok)}/s, ours ${r1(cc.ok)}/s`);

  opts.log('\n11b. OP refresh grants/s vs the bare oidc-provider');
  const floorRefresh = await opts.repeat(async () => {
    const r = await fetch(`${opts.floorBase}/_seed?n=${CONNECTIONS}`);
    return refreshLoop(opts.floorBase, '/token', FLOOR_CLIENT, (await r.json()) as string[], opts.seconds);
  });
  const refresh = await opts.repeat(async () => {
    const chains: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) chains.push(await opRefreshToken(opts.base, app, opts.user));
    return refreshLoop(opts.base, '/oidc/token', app, chains, opts.seconds);
  });
  const refreshPerVcpu = refresh.ok / vcpus;
  rows.push({
    scenario: `11b. OP refresh grants/s (rotation) ÷ bare oidc-provider, ${CONNECTIONS} chains`,
    value: `${r1(refresh.ok)}/s (p99 ${r1(refresh.p99)} ms, ${refresh.non2xx} non-2xx; ${r1(refreshPerVcpu)}/s per vCPU = ${r2(refreshPerVcpu / KEYCLOAK_PER_VCPU)}× Keycloak's ${KEYCLOAK_PER_VCPU})`,
    baseline: `floor ${r1(floorRefresh.ok)}/s (p99 ${r1(floorRefresh.p99)} ms)${bare}`,
    ratio: r2(refresh.ok / floorRefresh.ok),
    target: '≥ 480/s',
    met: refresh.ok >= 480,
  });
  opts.log(`   floor ${r1(floorRefresh.ok)}/s, ours ${r1(refresh.ok)}/s`);
  rows.push(await organizationTokenScenario(opts, app, refresh));
  return rows;
}
