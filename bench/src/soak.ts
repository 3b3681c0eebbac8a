#!/usr/bin/env node
/**
 * `make soak` (issue #14; not CI): 500 concurrent clients for 60 s against the all-in-one system
 * (its own data directory and ports), a mix of logins, refreshes, authenticated reads, searches
 * and writes. Reports 5xx answers, timeouts, p50/p99, the system process's RSS and open file
 * handles at the 20th and the 60th second, prints the table and writes it into its own section
 * of bench/README.md (between the soak markers; the results table above is not touched).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonClient } from './load';
import { AUTH_LIMITS_LIFTED, ROOT, forkAllInOne, waitReady } from './system';
import { freePort } from '@iam/platform/testing';

const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 500);
/**
 * SOAK_STORM=1: a reconnect storm. The sessions are made in the warm-up over a shared pool, so
 * every client opens its own connection in the same instant as the load starts (the 500 clients
 * start together on brand-new connections), instead of having opened it when it arrived.
 */
const STORM = process.env.SOAK_STORM === '1';
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const USERS = 50;
const TIMEOUT_MS = 10_000;
const ADMIN = { email: 'admin@example.com', password: 'Admin-Passw0rd!' };


interface Answer {
  status: number;
  ms: number;
  json: Record<string, unknown> | null;
}

/** A string field of an answer's body ('' when absent). */
const field = (a: Answer, key: string): string => {
  const v = a.json?.[key];
  return typeof v === 'string' ? v : '';
};

type Session = { token: string; refreshToken: string } | null;
const sessionOf = (a: Answer): Session => (a.status === 200 ? { token: field(a, 'token'), refreshToken: field(a, 'refreshToken') } : null);

/**
 * The soak's client: node:http with a keep-alive agent (one socket per client at most), not
 * fetch, whose CPU on the same two cores (about 2 ms a request) delayed the answers it measured.
 */
function soakClient(base: string, sockets: number): { call(method: string, path: string, body?: unknown, token?: string): Promise<Answer>; close(): void } {
  const http = jsonClient(base, sockets, { timeoutMs: TIMEOUT_MS });
  return {
    call: async (method, path, body, token) => {
      const t = performance.now();
      try {
        const a = await http.call(method, path, body, token);
        return { status: a.status, ms: performance.now() - t, json: a.json };
      } catch (err) {
        const e = err as { name?: string; code?: string };
        if (process.env.SOAK_DEBUG) process.stderr.write(`soak: ${new Date().toISOString().slice(11, 23)} ${method} ${path.split('?')[0]} ${e.name} ${e.code} after ${Math.round(performance.now() - t)} ms\n`);
        return { status: 0, ms: performance.now() - t, json: null };
      }
    },
    close: () => http.close(),
  };
}

/** Socket inodes of the connections accepted on `port` (the clients' own connections, not the system's handles). */
function acceptedSockets(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local address, state (0A = LISTEN), inode
      if (cols.length > 9 && cols[1]!.endsWith(`:${hex}`) && cols[3] !== '0A') inodes.add(cols[9]!);
    }
  }
  return inodes;
}

interface Footprint {
  rssMiB: number;
  /** Every open file descriptor. */
  handles: number;
  /** Without the connections the soak's clients opened to the gateway (their number follows the clients, not the system). */
  ownHandles: number;
}

function footprint(pid: number, port: number): Footprint {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const accepted = acceptedSockets(port);
  let handles = 0;
  let clients = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    handles++;
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode && accepted.has(inode)) clients++;
    } catch {
      // closed meanwhile
    }
  }
  return { rssMiB: rssKiB / 1024, handles, ownHandles: handles - clients };
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'iam-soak-'));
  chmodSync(dir, 0o755); // the embedded PostgreSQL may run as another OS user (as root)
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    DATA_DIR: dir,
    PORT: String(port),
    HOST: '127.0.0.1',
    EMBEDDED_PG_PORT: String(await freePort()),
    ...Object.fromEntries(['DIRECTORY', 'IDENTITY', 'NOTIFICATION', 'COMMERCE'].map((s) => [`${s}_GRPC_PORT`, '0'])),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    ...AUTH_LIMITS_LIFTED,
  };
  // The system's own log (warnings and errors) is kept beside the data, in SOAK_LOG.
  const logFile = process.env.SOAK_LOG ?? join(tmpdir(), 'iam-soak-system.log');
  const log = openSync(logFile, 'w');
  const system: ChildProcess = forkAllInOne({ env: { ...process.env, ...env }, stdio: ['ignore', log, log, 'ipc'] });
  try {
    await waitReady(base, [system]);
    const client = soakClient(base, 20);
    const admin = field(await client.call('POST', '/api/v1/auth/generate-jwt', ADMIN), 'token');
    // Administrators (so every read and write is allowed), ten clients each.
    const users: Array<{ id: string; email: string; password: string }> = [];
    for (let i = 0; i < USERS; i++) {
      const u = { email: `soak-${i}-${randomUUID()}@example.com`, password: `Soak!${randomUUID().slice(0, 8)}#Aa9` };
      const r = await client.call('POST', '/api/v1/users', { firstName: 'Soak', lastName: `User${i}`, ...u, roles: ['Administrator'] }, admin);
      if (r.status !== 201) throw new Error(`creating a soak user: ${r.status} ${JSON.stringify(r.json)}`);
      users.push({ id: field(r, 'id'), ...u });
    }
    const statuses = new Map<string, number>();
    const latencies: number[] = [];
    let timeouts = 0;
    let fivexx = 0;
    const count = (kind: string, a: Answer) => {
      statuses.set(`${kind} ${a.status}`, (statuses.get(`${kind} ${a.status}`) ?? 0) + 1);
      if (a.status === 0) timeouts++;
      else latencies.push(a.ms);
      if (a.status >= 500) fivexx++;
    };
    // Each client has its own keep-alive connection, opened when it arrived: the warm-up (not
    // measured) logs every client in, 20 at a time, as clients that arrived over time would have.
    // (500 connections opened in the same instant as the load, through one shared pool of sockets,
    // is a reconnect storm: a scenario of its own, see bench/README.md.)
    const clients = Array.from({ length: CLIENTS }, () => soakClient(base, 1));
    const sessions: Session[] = [];
    for (let n = 0; n < CLIENTS; n += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, CLIENTS - n) }, async (_, j) => {
          const me = users[(n + j) % USERS]!;
          const a = await (STORM ? client : clients[n + j]!).call('POST', '/api/v1/auth/generate-jwt', { email: me.email, password: me.password });
          return sessionOf(a);
        }),
      );
      sessions.push(...batch);
    }
    const started = Date.now();
    const end = started + SECONDS * 1000;
    const samples: Record<number, Footprint> = {};
    const sampler = setInterval(() => {
      const s = Math.round((Date.now() - started) / 1000);
      if ((s % 10 === 0 || s === SECONDS) && samples[s] === undefined) samples[s] = footprint(system.pid!, port);
    }, 250);
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, n) => {
        const me = users[n % USERS]!;
        const client = clients[n]!;
        let session = sessions[n] ?? null;
        for (let i = n; Date.now() < end; i++) {
          const k = i % 20;
          if (!session) {
            const a = await client.call('POST', '/api/v1/auth/generate-jwt', { email: me.email, password: me.password });
            count('login', a);
            session = sessionOf(a);
          } else if (k === 0) {
            const a = await client.call('POST', '/api/v1/auth/generate-jwt', { email: me.email, password: me.password });
            count('login', a);
            if (a.status === 200) session = sessionOf(a);
          } else if (k < 4) {
            const a = await client.call('POST', '/api/v1/auth/refresh', { refreshToken: session.refreshToken });
            count('refresh', a);
            session = sessionOf(a);
          } else if (k < 12) {
            count('read', await client.call('GET', `/api/v1/users?id=${me.id}`, undefined, session.token));
          } else if (k < 18) {
            count('search', await client.call('GET', `/api/v1/users?q=${encodeURIComponent(`user${n % 10}`)}&pageSize=10`, undefined, session.token));
          } else {
            count('write', await client.call('PUT', `/api/v1/users/${me.id}`, { lastName: `User${i % 1000}` }, session.token));
          }
        }
      }),
    );
    clearInterval(sampler);
    for (const c of [client, ...clients]) c.close();
    samples[SECONDS] ??= footprint(system.pid!, port);
    const sorted = latencies.sort((a, b) => a - b);
    const total = sorted.length + timeouts;
    const a = samples[20];
    const b = samples[SECONDS];
    const rssGrowth = a ? ((b.rssMiB - a.rssMiB) / a.rssMiB) * 100 : NaN;
    const rows: Array<[string, string, string, boolean | null]> = [
      ['requests', `${total} (${Math.round(total / SECONDS)}/s)`, '', null],
      ['5xx answers', String(fivexx), '0', fivexx === 0],
      ['timeouts (no answer in 10 s)', String(timeouts), '0', timeouts === 0],
      ['p50 / p99 latency', `${pct(sorted, 0.5).toFixed(0)} / ${pct(sorted, 0.99).toFixed(0)} ms`, 'reported', null],
      ['RSS at 20 s → 60 s', a ? `${a.rssMiB.toFixed(0)} → ${b.rssMiB.toFixed(0)} MiB (${rssGrowth >= 0 ? '+' : ''}${rssGrowth.toFixed(1)} %)` : 'n/a', '< 10 % growth', a ? rssGrowth < 10 : null],
      [
        'RSS every 10 s',
        Object.entries(samples)
          .map(([t, f]) => `${t} s: ${f.rssMiB.toFixed(0)}`)
          .join(', '),
        '',
        null,
      ],
      [
        'open handles at 20 s → 60 s: the system\'s own (all, with the clients\' connections)',
        a ? `${a.ownHandles} → ${b.ownHandles} (${a.handles} → ${b.handles})` : 'n/a',
        'no growth',
        a ? b.ownHandles <= a.ownHandles : null,
      ],
      ['answers by kind', [...statuses].sort().map(([k, v]) => `${k}: ${v}`).join(', '), '', null],
    ];
    const table = [
      `${CLIENTS} concurrent clients${STORM ? ', all starting together on brand-new connections (a reconnect storm),' : ''} for ${SECONDS} s against the all-in-one process (mix per client: 5 % logins, 15 % refreshes, 40 % reads by id, 30 % searches, 10 % writes; ${USERS} Administrator users), ${new Date().toISOString().slice(0, 10)}, ${process.env.SOAK_MACHINE ?? '2 cores, shared'}:`,
      '',
      '| measure | value | target | met |',
      '|---|---|---|---|',
      ...rows.map(([m, v, t, met]) => `| ${m} | ${v} | ${t} | ${met === null ? '' : met ? 'yes' : '**no**'} |`),
    ].join('\n');
    process.stdout.write(`\n${table}\n\n(system log: ${logFile})\n`);
    // SOAK_README: another file to write the section into (trial runs leave bench/README.md alone).
    const readme = process.env.SOAK_README ?? join(ROOT, 'bench/README.md');
    const marker = STORM ? 'soak-storm' : 'soak';
    const section = `<!-- ${marker}:start -->\n${table}\n<!-- ${marker}:end -->`;
    const text = readFileSync(readme, 'utf8');
    const between = new RegExp(`<!-- ${marker}:start -->[\\s\\S]*<!-- ${marker}:end -->`);
    const updated = between.test(text)
      ? text.replace(between, section)
      : `${text.trimEnd()}\n\n## Soak${STORM ? ': reconnect storm (`SOAK_STORM=1 make soak`)' : ' (`make soak`, issue #14)'}\n\nNot run in CI. Written by \`bench/src/soak.ts\` between the ${marker} markers.\n\n${section}\n`;
    writeFileSync(readme, updated);
  } finally {
    await new Promise<void>((resolve) => {
      if (system.exitCode !== null) return resolve();
      system.once('exit', () => resolve());
      system.kill('SIGTERM');
    });
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
