/**
 * The hosted email-action pages through the whole gateway app: what the process logs of a visit
 * and of the page's call (the route, never the query or the body: no token), and the headers the
 * pages leave with. routes/console.test.ts checks the pages' headers on the console plugin alone.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, HealthMonitor, createLogger, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';

const TOKEN = 'kP3v_q9ZtY0mW4xL7sN2aB8cD1eF6gH5jK0lM3nO9pQ';

describe('the hosted pages through the gateway', () => {
  let app: FastifyInstance;
  const lines: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
    for (const page of ['reset-password', 'verify-email']) writeFileSync(join(dir, `${page}.html`), `<!doctype html><title>${page}</title>`);
    const config = readConfig({ GATEWAY_PROFILES: 'full', CONSOLE_DIR: dir, ...NO_SHEDDING }, readGatewayConfig);
    // The identity service refuses the token (as for a used one) or is down: both are logged.
    let calls = 0;
    const upstreams = new Proxy({} as Upstreams, {
      get: () => new Proxy({}, { get: () => async () => Promise.reject(++calls % 2 ? AppError.validation('The token is invalid or expired.') : new Error('identity crashed')) }),
    });
    const authenticator: Authenticator = { verify: async () => Promise.reject(AppError.unauthenticated()) };
    // The processes' own logger (its redaction included), at debug: every line is kept.
    const logger = createLogger({ level: 'debug', service: 'gateway', destination: { write: (l: string) => void lines.push(l) } });
    app = await buildApp({ config, logger, metrics: testMetrics(), health: new HealthMonitor({ logger, checks: {} }), upstreams, authenticator, denylist: new Denylist() });
    await app.ready();
  });
  afterAll(() => app.close());

  it('a visit and the page\'s calls are logged by route, with no token anywhere (query, body, error)', async () => {
    for (const path of ['/reset-password', '/verify-email']) {
      const res = await app.inject({ url: `${path}?token=${TOKEN}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
    const refused = await app.inject({ method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token: TOKEN, newPassword: 'New-Passw0rd!2026' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain(TOKEN);
    const failed = await app.inject({ method: 'POST', url: '/api/v1/auth/email-verification/confirm', payload: { token: TOKEN } });
    expect(failed.statusCode).toBe(500);
    expect(failed.body).not.toContain(TOKEN);
    // A malformed query too (a token the page would never send) is logged by route alone.
    await app.inject({ url: `/reset-password?token=${TOKEN}&token=${TOKEN}%zz` });
    const log = lines.join('');
    expect(log).toContain('"route":"/reset-password"');
    expect(log).toContain('"route":"/verify-email"');
    expect(log).toContain('"route":"/api/v1/auth/password-reset/confirm"');
    expect(log).toContain('request failed');
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain('token=');
  });
});
