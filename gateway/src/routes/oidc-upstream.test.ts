/**
 * The provider proxy when the provider cannot answer (issue #35, items 2 and 3), through the whole
 * gateway app on a real port against a stand-in provider: refused, reset, silent (the deadline),
 * late. Each is a 503 or 504 with Retry-After (problem+json with the OAuth error members, or a page
 * for a browser), never a 500; the provider is told the deadline and cannot be told another.
 */
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import { type AddressInfo, type Socket, createServer as createTcpServer } from 'node:net';
import { AppError, HealthMonitor, createLogger, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';
import { TIMEOUT_HEADER } from './oidc-upstream';

const TIMEOUT_MS = 1_000;
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

type Behaviour = 'answer' | 'silent' | 'late' | 'reset';

describe('the provider proxy when the provider cannot answer', () => {
  let behaviour: Behaviour = 'answer';
  const seen: IncomingHttpHeaders[] = [];
  const sockets = new Set<Socket>();
  let provider: Server;
  let resetter: ReturnType<typeof createTcpServer>;
  const apps: FastifyInstance[] = [];
  const lines: string[] = [];
  let base = '';

  async function gatewayFor(opUrl: string): Promise<string> {
    const config = readConfig({ GATEWAY_PROFILES: 'full', IDENTITY_OP_URL: opUrl, IDENTITY_OP_TIMEOUT_MS: String(TIMEOUT_MS), ...NO_SHEDDING }, readGatewayConfig);
    const upstreams = new Proxy({} as Upstreams, { get: () => new Proxy({}, { get: () => async () => Promise.reject(AppError.unavailable()) }) });
    const authenticator: Authenticator = { verify: async () => Promise.reject(AppError.unauthenticated()) };
    const logger = createLogger({ level: 'warn', service: 'gateway', destination: { write: (l: string) => void lines.push(l) } });
    const app = await buildApp({ config, logger, metrics: testMetrics(), health: new HealthMonitor({ logger, checks: {} }), upstreams, authenticator, denylist: new Denylist() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    apps.push(app);
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    provider = createServer((req, res) => {
      seen.push(req.headers);
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"issuer":"x"}');
      };
      if (behaviour === 'answer') answer();
      else if (behaviour === 'late') setTimeout(answer, TIMEOUT_MS + 300);
      // 'silent': never answers (the database it waits on is blackholed).
    });
    provider.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    resetter = createTcpServer((s) => s.resetAndDestroy());
    await new Promise<void>((r) => resetter.listen(0, '127.0.0.1', r));
    base = await gatewayFor(`http://127.0.0.1:${(provider.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => provider.close(r));
    await new Promise((r) => resetter.close(r));
  });

  beforeEach(() => {
    behaviour = 'answer';
    seen.length = 0;
    lines.length = 0;
  });

  async function expectUnavailable(url: string, status: 503 | 504, init: RequestInit = {}): Promise<void> {
    const res = await fetch(url, init);
    const text = await res.text();
    expect({ url, status: res.status }).toEqual({ url, status });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(text).not.toMatch(/ECONN|undici|127\.0\.0\.1|at .*\.js/);
    if (new Headers(init.headers).get('accept') === BROWSER) {
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(text).toContain('Try again in a moment');
    } else {
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(text)).toMatchObject({ status, error: 'temporarily_unavailable', traceId: res.headers.get('x-trace-id') });
    }
    expect(lines.join('')).not.toMatch(/"level":(50|"error")/);
  }

  it('the provider refusing connections (stopped, restarting) → 503 on every proxied path; a browser gets a page', async () => {
    const free = createTcpServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as AddressInfo).port;
    await new Promise((r) => free.close(r));
    const refused = await gatewayFor(`http://127.0.0.1:${port}`);
    await expectUnavailable(`${refused}/.well-known/openid-configuration`, 503);
    await expectUnavailable(`${refused}/oidc/token`, 503, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x' });
    await expectUnavailable(`${refused}/oidc/auth?client_id=x`, 503, { headers: { accept: BROWSER } });
    await expectUnavailable(`${refused}/oidc/interaction/abc`, 503, { headers: { accept: BROWSER } });
    await expectUnavailable(`${refused}/oidc/me`, 503);
  });

  it('the provider resetting connections → 503', async () => {
    const reset = await gatewayFor(`http://127.0.0.1:${(resetter.address() as AddressInfo).port}`);
    await expectUnavailable(`${reset}/oidc/token`, 503, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    await expectUnavailable(`${reset}/oidc/session/end`, 503, { headers: { accept: BROWSER } });
  });

  it('the provider silent past the deadline → 504 (not before the deadline); a browser gets a page', async () => {
    behaviour = 'silent';
    const t = performance.now();
    await expectUnavailable(`${base}/oidc/token`, 504, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    expect(performance.now() - t).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    await expectUnavailable(`${base}/.well-known/openid-configuration`, 504);
    await expectUnavailable(`${base}/oidc/interaction/abc/login`, 504, { method: 'POST', headers: { accept: BROWSER, 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=a%40b.c&password=x' });
  });

  it('an answer arriving after the 504 left is dropped; the next request is answered', async () => {
    behaviour = 'late';
    await expectUnavailable(`${base}/oidc/token`, 504, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    await new Promise((r) => setTimeout(r, 500));
    behaviour = 'answer';
    const ok = await fetch(`${base}/.well-known/openid-configuration`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ issuer: 'x' });
    expect(lines.join('')).not.toMatch(/"level":(50|"error")|already sent/);
  });

  it('the provider is told what is left of the deadline, whatever the client sent', async () => {
    const res = await fetch(`${base}/.well-known/openid-configuration`, { headers: { [TIMEOUT_HEADER]: '600000' } });
    expect(res.status).toBe(200);
    const left = Number(seen[0]?.[TIMEOUT_HEADER]);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(TIMEOUT_MS);
  });
});
