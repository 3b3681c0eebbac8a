/**
 * CPU per operation (issue #25: the targets are CPU per operation, which no other job on the
 * machine can bend as much as a throughput ratio): CPU seconds of this process (the load client),
 * of each child process (by what it runs: `gateway`, `identity`, `all-in-one`, `bare`…) and of the
 * PostgreSQL backends connected to the bench's databases, read from /proc (Linux; 0 elsewhere).
 */
import { readFileSync, readdirSync } from 'node:fs';
import type { Client } from 'pg';

/** CPU seconds (user + system) of a process from /proc (0 elsewhere or once it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** This process's children by what they run (`identity`, `gateway`, `all-in-one`, `bare`…). */
export function children(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const task of readdirSync('/proc/self/task')) {
      for (const pid of readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number)) {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').find((a) => a.endsWith('.js')) ?? String(pid);
        const m = /services\/([^/]+)\/|(gateway)\/|(all-in-one)\/|(bare)\.js|(oidc-floor)\.js/.exec(cmd);
        out.set(m ? (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5])! : cmd, pid);
      }
    }
  } catch {
    // not Linux: no CPU accounting
  }
  return out;
}

export type CpuSnapshot = Map<string, number>;

/**
 * CPU seconds used so far by each part: this process (`client`), each child, and the PostgreSQL
 * backends of the databases whose names start with `dbPrefix` (as `pg <application name>`; the
 * bare pipeline's unnamed connections to the directory database as `pg bare`).
 */
export async function cpuByPart(pg: Client, pids: Map<string, number>, dbPrefix: string): Promise<CpuSnapshot> {
  const out = new Map<string, number>([['client', cpuSeconds(process.pid)]]);
  for (const [name, pid] of pids) out.set(name, cpuSeconds(pid));
  const { rows } = await pg.query<{ pid: number; datname: string; application_name: string }>(
    "SELECT pid, datname, application_name FROM pg_stat_activity WHERE datname LIKE $1 || '%' AND pid <> pg_backend_pid()",
    [dbPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)],
  );
  for (const r of rows) {
    const k = `pg ${r.application_name || (r.datname === `${dbPrefix}directory` ? 'bare' : r.datname)}`;
    out.set(k, (out.get(k) ?? 0) + cpuSeconds(r.pid));
  }
  return out;
}

/**
 * CPU milliseconds per operation of each part between two snapshots (parts that came or went
 * count from 0). With `idle` (each part's CPU seconds per second at rest: health checks, relay
 * polls, timers) and the window's `seconds`, that background work is taken out first: at a few
 * dozen logins a second it would otherwise add milliseconds to each.
 */
export function cpuPerOp(before: CpuSnapshot, after: CpuSnapshot, ops: number, idle?: { rates: Map<string, number>; seconds: number }): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) {
    const background = idle ? (idle.rates.get(k) ?? 0) * idle.seconds : 0;
    const ms = (Math.max(0, v - (before.get(k) ?? 0) - background) * 1000) / Math.max(ops, 1);
    if (ms > 0.005) out.set(k, ms);
  }
  return out;
}

/** Each part's CPU seconds per second over `seconds` of rest (nothing sent to the system). */
export async function idleRates(pg: Client, pids: Map<string, number>, dbPrefix: string, seconds: number): Promise<Map<string, number>> {
  const before = await cpuByPart(pg, pids, dbPrefix);
  const started = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = await cpuByPart(pg, pids, dbPrefix);
  const elapsed = (performance.now() - started) / 1000;
  const rates = new Map<string, number>();
  for (const [k, v] of after) rates.set(k, Math.max(0, v - (before.get(k) ?? 0)) / elapsed);
  rates.delete('client');
  return rates;
}

/** The sum over parts, leaving out `exclude` (the load client, say). */
export function cpuTotal(perOp: Map<string, number>, exclude: readonly string[] = ['client']): number {
  let t = 0;
  for (const [k, ms] of perOp) if (!exclude.includes(k)) t += ms;
  return t;
}

/** `4.21 ms CPU/op: identity 1.25, gateway 1.19, …` (largest first). */
export function describeCpu(perOp: Map<string, number>): string {
  const parts = [...perOp].sort((a, b) => b[1] - a[1]);
  const total = parts.reduce((a, [, ms]) => a + ms, 0);
  return `${total.toFixed(2)} ms CPU/op: ${parts.map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(', ')}`;
}
