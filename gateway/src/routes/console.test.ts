import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testLogger } from '@iam/platform/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { CONSOLE_CSP, GRAPHIQL_CSP, HOSTED_PAGE_CSP, consoleRoutes } from './console';

/** The CSP's directives by name. */
const directives = (csp: unknown) => Object.fromEntries(String(csp).split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));

function builtConsole(): string {
  const dir = mkdtempSync(join(tmpdir(), 'console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>IAM console</title>');
  writeFileSync(join(dir, 'graphiql.html'), '<!doctype html><title>GraphiQL</title>');
  writeFileSync(join(dir, 'reset-password.html'), '<!doctype html><title>Choose a new password</title>');
  writeFileSync(join(dir, 'verify-email.html'), '<!doctype html><title>Confirm your email address</title>');
  writeFileSync(join(dir, 'account.html'), '<!doctype html><title>Your account</title>');
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(join(dir, 'assets', 'favicon-abc123.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

describe('console routes', () => {
  let app: FastifyInstance;
  const dir = builtConsole();
  beforeAll(async () => {
    app = Fastify();
    await app.register(consoleRoutes, { dir, console: true, graphiql: true, hostedPages: true, logger: testLogger() });
    await app.ready();
  });
  afterAll(() => app.close());

  it('serves index.html with no-store for /console and any path below it (SPA fallback)', async () => {
    for (const url of ['/console', '/console/', '/console/users/42']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      // The OP's answer (code, state) arrives in this address: nothing it loads names it.
      expect(res.headers['referrer-policy']).toBe('no-referrer');
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

  it('serves the favicon as image/svg+xml, which the page CSP allows (img-src self)', async () => {
    const res = await app.inject({ url: '/console/assets/favicon-abc123.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(directives(CONSOLE_CSP)['img-src']).toBe("'self' data:");
  });

  it('serves GraphiQL at /graphiql with its own CSP: scripts and workers from this origin only, inline styles on that page only', async () => {
    const res = await app.inject({ url: '/graphiql' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('GraphiQL');
    const csp = directives(res.headers['content-security-policy']);
    expect(csp).toMatchObject({ 'script-src': "'self'", 'worker-src': "'self'", 'style-src': "'self' 'unsafe-inline'", 'connect-src': "'self'", 'font-src': "'self' data:" });
    expect(String(res.headers['content-security-policy'])).not.toMatch(/unsafe-eval|https?:/);
    expect(res.headers['content-security-policy']).toBe(GRAPHIQL_CSP);
    // The console itself keeps no inline style.
    expect(directives((await app.inject({ url: '/console' })).headers['content-security-policy'])['style-src']).toBe("'self'");
  });

  it.each([
    ['/reset-password', 'Choose a new password'],
    ['/verify-email', 'Confirm your email address'],
    ['/account', 'Your account'],
  ])('serves the hosted page %s unframeable, with no Referer to anything it loads, never stored', async (path, title) => {
    const res = await app.inject({ url: `${path}?token=abc_DEF-123` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(title);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toBe(HOSTED_PAGE_CSP);
    const csp = directives(HOSTED_PAGE_CSP);
    expect(csp).toMatchObject({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
      'form-action': "'self'",
      'object-src': "'none'",
    });
    expect(HOSTED_PAGE_CSP).not.toMatch(/unsafe|https?:|\*/);
    // Only GET (and HEAD): a prefetcher's request changes nothing, and there is nothing to post here.
    expect((await app.inject({ method: 'POST', url: path })).statusCode).toBe(404);
  });

  it('serves only what is asked: GraphiQL without the console (edge only), the console without GraphiQL', async () => {
    const edgeOnly = Fastify();
    await edgeOnly.register(consoleRoutes, { dir, console: false, graphiql: true, hostedPages: false, logger: testLogger() });
    expect((await edgeOnly.inject({ url: '/graphiql' })).statusCode).toBe(200);
    expect((await edgeOnly.inject({ url: '/reset-password' })).statusCode).toBe(404);
    expect((await edgeOnly.inject({ url: '/console/assets/index-abc123.js' })).statusCode).toBe(200);
    expect((await edgeOnly.inject({ url: '/console' })).statusCode).toBe(404);
    await edgeOnly.close();
    const fullOnly = Fastify();
    await fullOnly.register(consoleRoutes, { dir, console: true, graphiql: false, hostedPages: true, logger: testLogger() });
    expect((await fullOnly.inject({ url: '/graphiql' })).statusCode).toBe(404);
    expect((await fullOnly.inject({ url: '/reset-password' })).statusCode).toBe(200);
    await fullOnly.close();
  });

  it('mounts nothing when the console is not built', async () => {
    const bare = Fastify();
    await bare.register(consoleRoutes, { dir: join(tmpdir(), 'no-such-console'), console: true, graphiql: true, hostedPages: true, logger: testLogger() });
    expect((await bare.inject({ url: '/console' })).statusCode).toBe(404);
    expect((await bare.inject({ url: '/graphiql' })).statusCode).toBe(404);
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
    await dev.register(consoleRoutes, { dir: '/nonexistent', devUrl: `http://127.0.0.1:${(vite.address() as AddressInfo).port}`, console: true, graphiql: true, hostedPages: true, logger: testLogger() });
    const res = await dev.inject({ url: '/console/src/main.tsx' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('vite dev page');
    expect(seen).toEqual(['/console/src/main.tsx']);
    const ide = await dev.inject({ url: '/graphiql' });
    expect(ide.statusCode).toBe(302);
    expect(ide.headers.location).toBe('/console/graphiql.html');
    await dev.close();
    await new Promise((r) => vite.close(r));
  });
});
