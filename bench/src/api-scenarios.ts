/**
 * Scenarios 1-4, the REST API against the baselines of the same run: login against raw argon2id
 * (and under overload), GET /api/v1/users?id= with the read cache off and on, refresh rotations,
 * and the user search over the seeded users (first pages and pages by cursor). run.ts starts the
 * system and the baselines and hands each the same context.
 */
import { type LoadResult, type ScenarioRow, cannon, closedLoop, jsonClient, median, r1, r2 } from './load';
import { searchTerms, seedUsers } from './seed';
import { argon2BaselineCpu } from './system';

/** What run.ts measured or started, shared by the scenarios. */
export interface ApiBench {
  /** The system's gateway, and the one with the read cache off (the same one in the all-in-one shape). */
  base: string;
  uncachedBase: string;
  /** One process per service (production shape), else the all-in-one. */
  split: boolean;
  seconds: number;
  runs: number;
  /** The client's concurrency: the machine's cores. */
  conc: number;
  /** The user the run created for scenarios 1–4. */
  user: { email: string; password: string };
  userId: string;
  directoryUrl: string;
  /** Scenario 4: the seeded users, and the pages followed by cursor after each first page. */
  users: number;
  cursorPages: number;
  /** The baselines: hello-world and bare-pipeline req/s, the bare pipeline's CPU per request. */
  baseline: { hello: number; bare: number; bareCpu: number[]; column: string };
  repeat(fn: () => Promise<LoadResult>): Promise<LoadResult>;
  /** A run with the CPU it cost per successful request (external PostgreSQL only, else NaN). */
  measuredCpu(run: () => Promise<LoadResult>): Promise<{ r: LoadResult; cpuMs: number; cpu: string }>;
  post(path: string, body: unknown, token?: string): Promise<{ status: number; json: Record<string, unknown> }>;
  loginAdmin(): Promise<string>;
  log(s: string): void;
}

/** 1. login vs raw argon2; CPU per login beyond the hash (issue #25 item 5); 1b. overload. */
export async function loginScenarios(ctx: ApiBench): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = [];
  // 1. login vs raw argon2; CPU per login beyond the hash (issue #25 item 5)
  ctx.log('\n1. login/s vs raw argon2id verify/s; CPU per login beyond the hash');
  const argons = Array.from({ length: ctx.runs }, () => argon2BaselineCpu(ctx.conc, ctx.seconds));
  const argon = median(argons.map((a) => a.perSecond));
  const hashCpu = median(argons.map((a) => a.cpuMsPerOp));
  const loginBody = JSON.stringify({ email: ctx.user.email, password: ctx.user.password });
  const loginCpu: number[] = [];
  const login = await ctx.repeat(async () => {
    const m = await ctx.measuredCpu(() => cannon({ url: `${ctx.base}/api/v1/auth/generate-jwt`, method: 'POST', headers: { 'content-type': 'application/json' }, body: loginBody, connections: 2 * ctx.conc, duration: ctx.seconds }));
    loginCpu.push(m.cpuMs);
    ctx.log(`   login ${r1(m.r.ok)}/s; ${m.cpu}`);
    return m.r;
  });
  rows.push({ scenario: '1. login/s ÷ raw argon2id verify/s (m=19 MiB, t=2, p=1; information)', value: `${r1(login.ok)}/s (p99 ${r1(login.p99)} ms)`, baseline: `${r1(argon)}/s`, ratio: r2(login.ok / argon), target: '—', met: true });
  const beyond = median(loginCpu) - hashCpu;
  rows.push({
    scenario: '1c. login: CPU per login beyond the argon2id hash (system processes and their PostgreSQL backends)',
    value: `${r2(beyond)} ms (${r2(median(loginCpu))} ms per login)`,
    baseline: `${r2(hashCpu)} ms per raw verification`,
    ratio: r2(median(loginCpu) / hashCpu),
    target: '≤ 8 ms beyond the hash',
    met: beyond <= 8,
  });
  ctx.log(`   argon2 ${r1(argon)}/s (${r2(hashCpu)} ms CPU each), login ${r1(login.ok)}/s, ${r2(beyond)} ms CPU beyond the hash`);
  const overload = await cannon({ url: `${ctx.base}/api/v1/auth/generate-jwt`, method: 'POST', headers: { 'content-type': 'application/json' }, body: loginBody, connections: 300, duration: ctx.seconds, timeout: 10 });
  rows.push({
    scenario: '1b. login overload (300 connections): answered 429, not timed out',
    value: `${overload.status429} × 429, ${overload.timeouts} timeouts, ${overload.errors} errors, p99 ${r1(overload.p99)} ms`,
    baseline: '—',
    ratio: r2(overload.timeouts === 0 && overload.errors === 0 ? 1 : 0),
    target: '0 timeouts',
    met: overload.timeouts === 0 && overload.errors === 0 && overload.status429 > 0,
  });
  ctx.log(`   overload: ${overload.status429} × 429, ${overload.timeouts} timeouts`);
  return rows;
}

/** 2. GET ?id= (read cache off) vs the bare pipeline; 2c. from the read cache (split processes only). */
export async function readByIdScenarios(ctx: ApiBench): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = [];
  ctx.log('\n2. GET /api/v1/users?id= vs the bare pipeline');
  const byId = await ctx.repeat(async () => {
    const token = await ctx.loginAdmin();
    return cannon({ url: `${ctx.uncachedBase}/api/v1/users?id=${ctx.userId}`, headers: { authorization: `Bearer ${token}` }, connections: 16, duration: ctx.seconds });
  });
  rows.push({
    scenario: `2. GET /api/v1/users?id= (read cache off) req/s ÷ bare pipeline req/s, 16 connections (information${ctx.split ? ': a gateway and a directory process against one' : ''})`,
    value: `${r1(byId.ok)}/s (p99 ${r1(byId.p99)} ms; ÷ hello-world ${r2(byId.ok / ctx.baseline.hello)})`,
    baseline: ctx.baseline.column,
    ratio: r2(byId.ok / ctx.baseline.bare),
    target: '—',
    met: true,
  });
  ctx.log(`   by id ${r1(byId.ok)}/s p99 ${byId.p99} ms`);
  if (ctx.split) {
    const cached = await ctx.repeat(async () => {
      const token = await ctx.loginAdmin();
      return cannon({ url: `${ctx.base}/api/v1/users?id=${ctx.userId}`, headers: { authorization: `Bearer ${token}` }, connections: 16, duration: ctx.seconds });
    });
    rows.push({
      scenario: '2c. GET /api/v1/users?id= from the gateway read cache req/s ÷ bare pipeline req/s (information: split processes)',
      value: `${r1(cached.ok)}/s (p99 ${r1(cached.p99)} ms; ÷ hello-world ${r2(cached.ok / ctx.baseline.hello)})`,
      baseline: ctx.baseline.column,
      ratio: r2(cached.ok / ctx.baseline.bare),
      target: '—',
      met: true,
    });
    ctx.log(`   cached by id ${r1(cached.ok)}/s p99 ${cached.p99} ms`);
  }
  return rows;
}

/** 3. refresh rotations/s vs the bare pipeline; 3c. their CPU per rotation. */
export async function refreshScenarios(ctx: ApiBench): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = [];
  ctx.log('\n3. refresh rotations/s');
  const refreshCpu: number[] = [];
  const refresh = await ctx.repeat(async () => {
    const chains: string[] = [];
    for (let i = 0; i < 16; i++) chains.push((await ctx.post('/api/v1/auth/generate-jwt', { email: ctx.user.email, password: ctx.user.password })).json.refreshToken as string);
    // Each worker rotates its own token chain: one refresh token is never used twice. Over
    // node:http, not fetch: the client shares the cores with the system (see jsonClient).
    const http = jsonClient(ctx.base, 16);
    try {
      const m = await ctx.measuredCpu(() =>
        closedLoop(ctx.seconds, 16, async (worker) => {
          const r = await http.call('POST', '/api/v1/auth/refresh', { refreshToken: chains[worker] });
          if (r.status === 200) chains[worker] = r.json.refreshToken as string;
          return r.status;
        }),
      );
      refreshCpu.push(m.cpuMs);
      ctx.log(`   refresh ${r1(m.r.ok)}/s; ${m.cpu}`);
      return m.r;
    } finally {
      http.close();
    }
  });
  rows.push({
    scenario: '3. refresh rotations/s ÷ bare pipeline req/s (information)',
    value: `${r1(refresh.ok)}/s (p99 ${r1(refresh.p99)} ms, ${refresh.non2xx} non-2xx; ÷ hello-world ${r2(refresh.ok / ctx.baseline.hello)})`,
    baseline: ctx.baseline.column,
    ratio: r2(refresh.ok / ctx.baseline.bare),
    target: '—',
    met: true,
  });
  const cpuRatio = median(refreshCpu) / median(ctx.baseline.bareCpu);
  rows.push({
    scenario: '3c. refresh: CPU per rotation ÷ CPU per bare-pipeline request (system processes and their PostgreSQL backends)',
    value: `${r2(median(refreshCpu))} ms`,
    baseline: `${r2(median(ctx.baseline.bareCpu))} ms`,
    ratio: r2(cpuRatio),
    target: '≤ 3',
    met: cpuRatio <= 3,
  });
  ctx.log(`   refresh ${r1(refresh.ok)}/s`);
  return rows;
}

/** 4. search over the seeded users: first pages, and 4k. pages reached by cursor (issue #25 item 6). */
export async function searchScenarios(ctx: ApiBench): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = [];
  ctx.log(`\n4. GET /api/v1/users?q= over ${ctx.users} users`);
  await seedUsers(ctx.directoryUrl, ctx.users, (s) => ctx.log(`   ${s}`));
  const terms = await searchTerms(ctx.directoryUrl, 500);
  const reader = jsonClient(ctx.base, 4);
  let token = await ctx.loginAdmin();
  const get = async (path: string) => (await reader.call('GET', path, undefined, token)).status;
  token = await ctx.loginAdmin();
  const idLat = await ctx.repeat(() => closedLoop(ctx.seconds, 4, () => get(`/api/v1/users?id=${ctx.userId}`)));
  let i = 0;
  const search = await ctx.repeat(async () => {
    token = await ctx.loginAdmin();
    return closedLoop(ctx.seconds, 4, () => get(`/api/v1/users?q=${encodeURIComponent(terms[i++ % terms.length]!)}&pageSize=25`));
  });
  rows.push({
    scenario: `4. GET /api/v1/users?q=<3–6 chars> over ${ctx.users.toLocaleString('en')} users: p95 (÷ p95 of ?id=)`,
    value: `p95 ${r1(search.p95)} ms (p50 ${r1(search.p50)}, p99 ${r1(search.p99)}; ${r1(search.ok)}/s)`,
    baseline: `p95 ${r1(idLat.p95)} ms`,
    ratio: r2(search.p95 / idLat.p95),
    target: 'p95 ≤ 50 ms',
    met: search.p95 <= 50,
  });
  ctx.log(`   search p95 ${r1(search.p95)} ms, id p95 ${r1(idLat.p95)} ms`);
  // Pages reached by cursor (issue #25 item 6): each of 100 searches followed page by page
  // (untimed), then those cursor pages asked again in the timed loop, 4 clients.
  const cursorPaths: string[] = [];
  token = await ctx.loginAdmin();
  for (const term of terms.slice(0, 100)) {
    const base = `/api/v1/users?q=${encodeURIComponent(term)}&pageSize=25`;
    let next = (await reader.call('GET', base, undefined, token)).json.nextCursor;
    for (let n = 0; typeof next === 'string' && n < ctx.cursorPages; n++) {
      const path = `${base}&cursor=${encodeURIComponent(next)}`;
      cursorPaths.push(path);
      next = (await reader.call('GET', path, undefined, token)).json.nextCursor;
    }
  }
  let k = 0;
  const byCursor = await ctx.repeat(async () => {
    token = await ctx.loginAdmin();
    return closedLoop(ctx.seconds, 4, () => get(cursorPaths[k++ % cursorPaths.length]!));
  });
  rows.push({
    scenario: `4k. GET /api/v1/users?q=…&cursor= (pages 2–${ctx.cursorPages + 1} of 100 searches, ${cursorPaths.length} pages) over ${ctx.users.toLocaleString('en')} users: p95, 4 clients`,
    value: `p95 ${r1(byCursor.p95)} ms (p50 ${r1(byCursor.p50)}, p99 ${r1(byCursor.p99)}; ${r1(byCursor.ok)}/s, ${byCursor.non2xx} non-2xx)`,
    baseline: `p95 ${r1(idLat.p95)} ms`,
    ratio: r2(byCursor.p95 / idLat.p95),
    target: 'p95 ≤ 50 ms',
    met: byCursor.p95 <= 50 && byCursor.non2xx === 0,
  });
  ctx.log(`   cursor pages p95 ${r1(byCursor.p95)} ms`);
  reader.close();
  return rows;
}
