/**
 * Behind a proxy (issue #44): TRUST_PROXY names the proxies whose X-Forwarded-* headers are
 * believed (true, false, or their addresses and CIDRs, as Hydra's allow_termination_from), and
 * Strict-Transport-Security goes only on answers to https requests (RFC 6797 §7.2).
 */
import { ConfigError, HealthMonitor, readConfig } from '@iam/platform/core';
import { testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app';
import { readGatewayConfig } from '../../config';

const health = new HealthMonitor({ logger: testLogger(), checks: {} });

async function gateway(env: Record<string, string>): Promise<FastifyInstance> {
  const app = await buildApp({ config: readConfig({ GATEWAY_PROFILES: '', ...env }, readGatewayConfig), logger: testLogger(), metrics: testMetrics(), health });
  app.get('/test/seen', async (req) => ({ ip: req.ip, protocol: req.protocol, host: req.host }));
  await app.ready();
  return app;
}

/** A request from `from` saying, through X-Forwarded-*, that a client at 198.51.100.7 used https://iam.example.com. */
const forwarded = (app: FastifyInstance, from: string, url = '/test/seen') =>
  app.inject({
    url,
    remoteAddress: from,
    headers: { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'iam.example.com' },
  });

describe('TRUST_PROXY', () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });
  const start = async (env: Record<string, string>) => {
    const app = await gateway(env);
    apps.push(app);
    return app;
  };

  it('a list of CIDRs: only a request from one of them is believed (client address, https, host)', async () => {
    const app = await start({ TRUST_PROXY: '10.0.0.0/8, fd00::/8' });
    expect((await forwarded(app, '10.1.2.3')).json()).toEqual({ ip: '198.51.100.7', protocol: 'https', host: 'iam.example.com' });
    expect((await forwarded(app, 'fd00::5')).json()).toMatchObject({ ip: '198.51.100.7', protocol: 'https' });
    // Anyone else sends the same headers in vain.
    expect((await forwarded(app, '203.0.113.9')).json()).toMatchObject({ ip: '203.0.113.9', protocol: 'http' });
  });

  it('false (the default) believes nobody; true believes any sender', async () => {
    expect((await forwarded(await start({}), '10.1.2.3')).json()).toMatchObject({ ip: '10.1.2.3', protocol: 'http' });
    expect((await forwarded(await start({ TRUST_PROXY: 'false' }), '10.1.2.3')).json()).toMatchObject({ ip: '10.1.2.3', protocol: 'http' });
    expect((await forwarded(await start({ TRUST_PROXY: 'true' }), '203.0.113.9')).json()).toMatchObject({ ip: '198.51.100.7', protocol: 'https' });
  });

  it('anything but true, false or addresses and CIDRs stops the start, naming the variable', () => {
    for (const bad of ['maybe', '10.0.0.0/33', '10.0.0.0/8,example.com', '::1/129', '10.0.0.1/8/8']) {
      let err: unknown;
      try {
        readConfig({ TRUST_PROXY: bad }, readGatewayConfig);
      } catch (e) {
        err = e;
      }
      expect([bad, err instanceof ConfigError && err.problems.some((p) => p.startsWith('TRUST_PROXY'))]).toEqual([bad, true]);
    }
    expect(readConfig({ TRUST_PROXY: 'loopback,10.0.0.1,192.168.0.0/16' }, readGatewayConfig).trustProxy).toEqual(['loopback', '10.0.0.1', '192.168.0.0/16']);
  });
});

describe('HSTS', () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });
  const start = async (env: Record<string, string>) => {
    const app = await gateway(env);
    apps.push(app);
    return app;
  };

  it('only on answers to https requests (RFC 6797 §7.2): never over plain http, nor when an untrusted sender claims https', async () => {
    const app = await start({ TRUST_PROXY: '10.0.0.0/8' });
    const hsts = 'max-age=31536000; includeSubDomains';
    expect((await forwarded(app, '10.1.2.3')).headers['strict-transport-security']).toBe(hsts);
    // Errors and the health routes too: every answer over https.
    expect((await forwarded(app, '10.1.2.3', '/no/such/route')).headers['strict-transport-security']).toBe(hsts);
    expect((await forwarded(app, '10.1.2.3', '/health')).headers['strict-transport-security']).toBe(hsts);
    expect((await app.inject({ url: '/health' })).headers['strict-transport-security']).toBeUndefined();
    expect((await forwarded(app, '203.0.113.9')).headers['strict-transport-security']).toBeUndefined();
  });

  it('configurable: max-age, includeSubDomains, preload; 0 turns it off', async () => {
    const tuned = await start({ TRUST_PROXY: 'true', HSTS_MAX_AGE: '63072000', HSTS_PRELOAD: 'true' });
    expect((await forwarded(tuned, '10.1.2.3')).headers['strict-transport-security']).toBe('max-age=63072000; includeSubDomains; preload');
    const narrow = await start({ TRUST_PROXY: 'true', HSTS_MAX_AGE: '600', HSTS_INCLUDE_SUBDOMAINS: 'false' });
    expect((await forwarded(narrow, '10.1.2.3')).headers['strict-transport-security']).toBe('max-age=600');
    const off = await start({ TRUST_PROXY: 'true', HSTS_MAX_AGE: '0' });
    expect((await forwarded(off, '10.1.2.3')).headers['strict-transport-security']).toBeUndefined();
    expect(() => readConfig({ HSTS_PRELOAD: 'true', HSTS_MAX_AGE: '600' }, readGatewayConfig)).toThrow(/HSTS_PRELOAD/);
  });
});
