/**
 * The development mailbox's routes exist only when the gateway is given a mailbox (the
 * all-in-one's composition root): otherwise no route at all (404 with or without a token, absent
 * from the API documents). With one: the Administrator role only (the mails hold live reset links
 * of any account, an administrator's too), no-store, newest first, 400/404 on ids.
 */
import { AppError, HealthMonitor, type AccessClaims, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import { openApiDocument } from '../docs/document';
import type { Upstreams } from '../upstreams';
import type { DevMailbox, DevMailboxMail } from './dev-mailbox';

const claims = (permissions: string[], roles: string[] = []): AccessClaims => ({
  sub: '7c2b5d1e-0000-4000-8000-000000000001',
  jti: 'j',
  iss: 'iam',
  aud: ['iam-api'],
  iat: 0,
  nbf: 0,
  exp: 0,
  email: 'who@example.com',
  roles,
  permissions,
});

/** Tokens by name: `manager` holds users.manage, `reader` audit.read only, `admin` the Administrator role. */
const authenticator: Authenticator = {
  verify: async (token) => {
    if (token === 'manager') return claims(['users.manage']);
    if (token === 'reader') return claims(['audit.read']);
    if (token === 'admin') return claims([], ['Administrator']);
    throw AppError.unauthenticated();
  },
};

const mail = (i: number): DevMailboxMail => ({
  id: `0b6e7a43-1d7c-4c2f-9f0e-00000000000${i}`,
  to: `u${i}@example.com`,
  subject: `Mail ${i}`,
  messageId: `<${i}@iam.notification>`,
  text: `Open http://localhost:8080/reset-password?token=t${i}`,
  html: `<p><a href="http://localhost:8080/reset-password?token=t${i}">Open</a></p>`,
  receivedAt: new Date(Date.UTC(2026, 10, 26, 12, i)),
});

const box: DevMailbox = {
  capacity: 200,
  list: () => [mail(2), mail(1)],
  get: (id) => [mail(1), mail(2)].find((m) => m.id === id),
};

async function gateway(devMailbox?: DevMailbox): Promise<FastifyInstance> {
  const config = readConfig({ GATEWAY_PROFILES: 'full,compact', CONSOLE_DIR: '/nonexistent', ...NO_SHEDDING }, readGatewayConfig);
  const upstreams = new Proxy({} as Upstreams, { get: () => new Proxy({}, { get: () => async () => Promise.reject(AppError.unavailable()) }) });
  const app = await buildApp({
    config,
    logger: testLogger(),
    metrics: testMetrics(),
    health: new HealthMonitor({ logger: testLogger(), checks: {} }),
    upstreams,
    authenticator,
    denylist: new Denylist(),
    devMailbox,
  });
  await app.ready();
  return app;
}

describe('the development mailbox routes', () => {
  let without: FastifyInstance;
  let withBox: FastifyInstance;
  beforeAll(async () => {
    without = await gateway();
    withBox = await gateway(box);
  });
  afterAll(async () => {
    await without?.close();
    await withBox?.close();
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('do not exist without a mailbox (a gateway of its own, any production configuration): 404 even for an administrator', async () => {
    for (const url of ['/api/v1/dev/mailbox', `/api/v1/dev/mailbox/${mail(1).id}`]) {
      expect((await without.inject({ url })).statusCode).toBe(404);
      expect((await without.inject({ url, headers: bearer('admin') })).statusCode).toBe(404);
    }
    const doc = await openApiDocument('full');
    expect(Object.keys(doc.paths as object).filter((p) => p.includes('/dev/'))).toEqual([]);
  });

  it('with one: the list, newest first, to administrators, never stored', async () => {
    for (const token of ['admin']) {
      const res = await withBox.inject({ url: '/api/v1/dev/mailbox', headers: bearer(token) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json<{ items: Array<Record<string, unknown>>; capacity: number }>();
      expect(body.capacity).toBe(200);
      expect(body.items.map((m) => m.subject)).toEqual(['Mail 2', 'Mail 1']);
      // The list carries no bodies (no tokens).
      expect(Object.keys(body.items[0]!).sort()).toEqual(['id', 'messageId', 'receivedAt', 'subject', 'to']);
    }
  });

  it('with one: a mail whole by id; 400 for a malformed id, 404 for an unknown one', async () => {
    const res = await withBox.inject({ url: `/api/v1/dev/mailbox/${mail(1).id}`, headers: bearer('admin') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ ...mail(1), receivedAt: mail(1).receivedAt.toISOString() });
    expect((await withBox.inject({ url: '/api/v1/dev/mailbox/not-a-uuid', headers: bearer('admin') })).statusCode).toBe(400);
    const unknown = await withBox.inject({ url: '/api/v1/dev/mailbox/0b6e7a43-1d7c-4c2f-9f0e-0000000000ff', headers: bearer('admin') });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('with one: 401 without a token, 403 without the Administrator role (users.manage is not enough: it would read an administrator\'s reset link)', async () => {
    for (const url of ['/api/v1/dev/mailbox', `/api/v1/dev/mailbox/${mail(1).id}`]) {
      expect((await withBox.inject({ url })).statusCode).toBe(401);
      for (const token of ['reader', 'manager']) {
        const forbidden = await withBox.inject({ url, headers: bearer(token) });
        expect(forbidden.statusCode).toBe(403);
        expect(forbidden.body).not.toContain('token=');
      }
    }
  });

  it('the console gets the routes\' types from a document generated with them (they are marked development)', async () => {
    const doc = await openApiDocument('full', { devMailbox: true });
    expect(Object.keys(doc.paths as object).filter((p) => p.includes('/dev/'))).toEqual(['/api/v1/dev/mailbox', '/api/v1/dev/mailbox/{id}']);
  });
});
