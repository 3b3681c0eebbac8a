/**
 * Issue #25 item 7: the read path at equal process counts. The bare pipeline is one Node process
 * (one core), so it is compared with the all-in-one process (also one Node process, what people
 * measure first with `make run`), not with a gateway and a directory on two: authenticated
 * `GET /api/v1/users?id=` at 50 connections, with the read cache off (2a) and on (2b), each run
 * next to a bare-pipeline run at the same connections, plus CPU per request of each side.
 */
import type { Client } from 'pg';
import { children, cpuByPart, cpuPerOp, cpuTotal, describeCpu, idleRates } from './cpu';
import { type LoadResult, type ScenarioRow, cannon, median, r1, r2 } from './load';
import { startChild, startSystem } from './system';

export interface ReadPathOptions {
  readonly env: Record<string, string>;
  readonly port: number;
  readonly barePort: number;
  readonly directoryUrl: string;
  readonly admin: { email: string; password: string };
  readonly seconds: number;
  readonly runs: number;
  readonly connections: number;
  /** The server's admin connection, for the backends' CPU (none: no CPU column). */
  readonly pg?: Client;
  readonly dbPrefix: string;
  readonly log: (s: string) => void;
}

interface Measured {
  readonly r: LoadResult;
  readonly cpuMs: number;
  readonly cpu: string;
}

export async function readPathScenarios(o: ReadPathOptions): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = [];
  const bare = await startChild('bare.js', [String(o.barePort), o.directoryUrl]);
  try {
    for (const cacheOn of [false, true]) {
      o.log(`\n2${cacheOn ? 'b' : 'a'}. all-in-one process, read cache ${cacheOn ? 'on' : 'off'}: GET /api/v1/users?id= vs the bare pipeline, ${o.connections} connections`);
      const sys = await startSystem({ ...o.env, GATEWAY_READ_CACHE: String(cacheOn) }, o.port, false);
      try {
        const post = async (path: string, body: unknown, token?: string) =>
          (await (await fetch(sys.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
        const token = (await post('/api/v1/auth/generate-jwt', o.admin)).token as string;
        const user = await post('/api/v1/users', { firstName: 'Read', lastName: 'Path', email: `read-${Date.now()}@example.com`, password: 'Bench-Passw0rd!' }, token);
        const pids = children();
        const idle = o.pg ? await idleRates(o.pg, pids, o.dbPrefix, 5) : undefined;
        const measure = async (url: string, headers: Record<string, string>): Promise<Measured> => {
          const before = o.pg ? await cpuByPart(o.pg, pids, o.dbPrefix) : undefined;
          const started = performance.now();
          const r = await cannon({ url, headers, connections: o.connections, duration: o.seconds });
          if (!o.pg || !before || !idle) return { r, cpuMs: NaN, cpu: '' };
          const per = cpuPerOp(before, await cpuByPart(o.pg, pids, o.dbPrefix), r.ok * o.seconds, { rates: idle, seconds: (performance.now() - started) / 1000 });
          return { r, cpuMs: cpuTotal(per), cpu: describeCpu(per) };
        };
        const bareUrl = `http://127.0.0.1:${o.barePort}/users/${user.id as string}`;
        const sysUrl = `${sys.base}/api/v1/users?id=${user.id as string}`;
        const auth = { authorization: `Bearer ${token}` };
        await cannon({ url: bareUrl, connections: o.connections, duration: 2 });
        await cannon({ url: sysUrl, headers: auth, connections: o.connections, duration: 2 });
        const bares: Measured[] = [];
        const reads: Measured[] = [];
        for (let i = 0; i < o.runs; i++) {
          const b = await measure(bareUrl, {});
          const s = await measure(sysUrl, auth);
          bares.push(b);
          reads.push(s);
          o.log(`   run ${i + 1}: bare ${r1(b.r.ok)}/s p99 ${b.r.p99} ms (${b.cpu}); all-in-one ${r1(s.r.ok)}/s p99 ${s.r.p99} ms (${s.cpu}); ratio ${r2(s.r.ok / b.r.ok)}`);
        }
        const m = (xs: Measured[], f: (x: Measured) => number) => median(xs.map(f));
        const ratio = median(reads.map((s, i) => s.r.ok / bares[i]!.r.ok));
        const p99 = m(reads, (x) => x.r.p99);
        const bareP99 = m(bares, (x) => x.r.p99);
        const cpuRatio = m(reads, (x) => x.cpuMs) / m(bares, (x) => x.cpuMs);
        const cpuNote = Number.isFinite(cpuRatio) ? `; CPU ${r2(m(reads, (x) => x.cpuMs))} ms/req (${r2(cpuRatio)}× the floor's)` : '';
        rows.push({
          scenario: `2${cacheOn ? 'b' : 'a'}. all-in-one process, read cache ${cacheOn ? 'on' : 'off'}: GET /api/v1/users?id= req/s ÷ bare pipeline (one process each), ${o.connections} connections`,
          value: `${r1(m(reads, (x) => x.r.ok))}/s (p99 ${r1(p99)} ms${cpuNote})`,
          baseline: `bare ${r1(m(bares, (x) => x.r.ok))}/s (p99 ${r1(bareP99)} ms${Number.isFinite(cpuRatio) ? `; CPU ${r2(m(bares, (x) => x.cpuMs))} ms/req` : ''})`,
          ratio: r2(ratio),
          target: cacheOn ? '≥ 2.5' : "≥ 0.8, p99 ≤ 1.5× the floor's",
          met: cacheOn ? ratio >= 2.5 : ratio >= 0.8 && p99 <= 1.5 * bareP99,
        });
      } finally {
        await sys.stop();
      }
    }
  } finally {
    bare.kill();
  }
  return rows;
}
