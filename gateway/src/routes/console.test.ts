import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testLogger } from '@iam/platform/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { consoleRoutes } from './console';

describe('console routes', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>IAM console</title>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    app = Fastify();
    await app.register(consoleRoutes, { dir, logger: testLogger() });
    await app.ready();
  });
  afterAll(() => app.close());

  it('serves index.html with no-store for /console and any path below it (SPA fallback)', async () => {
    for (const url of ['/console', '/console/', '/console/users/42']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.body).toContain('IAM console');
    }
  });

  it('serves hashed assets cached for a year as immutable, and 404 for a missing one', async () => {
    const res = await app.inject({ url: '/console/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await app.inject({ url: '/console/assets/nope.js' })).statusCode).toBe(404);
  });

  it('mounts nothing when the console is not built', async () => {
    const bare = Fastify();
    await bare.register(consoleRoutes, { dir: join(tmpdir(), 'no-such-console'), logger: testLogger() });
    expect((await bare.inject({ url: '/console' })).statusCode).toBe(404);
    await bare.close();
  });

  it('proxies /console to the dev server when CONSOLE_DEV_URL is set', async () => {
    const seen: string[] = [];
    const vite = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.setHeader('content-type', 'text/html');
      res.end('vite dev page');
    });
    await new Promise<void>((r) => vite.listen(0, '127.0.0.1', r));
    const dev = Fastify();
    await dev.register(consoleRoutes, { dir: '/nonexistent', devUrl: `http://127.0.0.1:${(vite.address() as AddressInfo).port}`, logger: testLogger() });
    const res = await dev.inject({ url: '/console/src/main.tsx' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('vite dev page');
    expect(seen).toEqual(['/console/src/main.tsx']);
    await dev.close();
    await new Promise((r) => vite.close(r));
  });
});
