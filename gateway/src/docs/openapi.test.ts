/**
 * The OpenAPI documents and the profiles: generated from the routes, one per mounted profile,
 * and GATEWAY_PROFILES deciding what is mounted (full only, compact only, both, minimal).
 */
import { HealthMonitor, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';
import { ResponseChecker } from './response-check';

// The routes are only mounted here, never called: any upstream call would be a test bug.
const unreachable = new Proxy({}, { get: () => new Proxy({}, { get: () => () => Promise.reject(new Error('not called in this test')) }) }) as unknown as Upstreams;
const authenticator: Authenticator = { verify: () => Promise.reject(new Error('not called in this test')) };

async function app(profiles: string): Promise<FastifyInstance> {
  const config = readConfig({ GATEWAY_PROFILES: profiles, ...NO_SHEDDING }, readGatewayConfig);
  const a = await buildApp({
    config,
    logger: testLogger(),
    metrics: testMetrics(),
    health: new HealthMonitor({ logger: testLogger(), checks: {} }),
    upstreams: unreachable,
    authenticator,
    denylist: new Denylist(),
  });
  await a.ready();
  return a;
}

describe('OpenAPI documents and profiles', () => {
  it('full and compact: a 3.1 document each, generated from every documented route; compact is version 0.1.0', async () => {
    const a = await app('full,compact');
    const full = (await a.inject({ url: '/docs/full/openapi.json' })).json();
    const compact = (await a.inject({ url: '/docs/compact/openapi.json' })).json();
    expect(full.openapi).toBe('3.1.0');
    expect(compact.info.version).toBe('0.1.0');
    expect(Object.keys(full.paths)).toEqual(
      expect.arrayContaining(['/health', '/api/v1/health', '/health/ready', '/metrics', '/api/v1/auth/generate-jwt', '/api/v1/auth/refresh', '/api/v1/users', '/api/v1/users/{id}', '/api/v1/role-permissions/{id}', '/.well-known/jwks.json']),
    );
    expect(Object.keys(compact.paths)).toEqual(expect.arrayContaining(['/health', '/api/v1/generate-jwt', '/api/v1/user', '/api/v1/user/{id}', '/api/v1/role/{id}']));
    expect(Object.keys(compact.paths)).not.toContain('/api/v1/users');
    const create = full.paths['/api/v1/users'].post;
    expect(create.security).toEqual([{ bearer: [] }]);
    expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    expect(create.responses['201'].content['application/json'].schema.properties).not.toHaveProperty('password');
    expect(compact.paths['/api/v1/user'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['page', 'page_size']);
    // Parameters with a default may be left out: none is listed as required.
    type Param = { name: string; in: string; required?: boolean };
    const required = (doc: { paths: Record<string, Record<string, { parameters?: Param[] }>> }) =>
      Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => (op.parameters ?? []).filter((p) => p.in === 'query' && p.required)));
    expect([...required(full), ...required(compact)]).toEqual([]);
    // The links list narrows to one role or one permission (Full).
    expect(full.paths['/api/v1/role-permissions'].get.parameters.map((p: Param) => p.name)).toEqual(expect.arrayContaining(['roleId', 'permissionId']));
    expect(full.paths['/api/v1/users'].get.parameters.map((p: Param) => p.name)).not.toContain('roleId');
    expect((await a.inject({ url: '/docs' })).headers['content-type']).toMatch(/text\/html/);
    expect((await a.inject({ url: '/docs/static/swagger-ui.css' })).statusCode).toBe(200);
    await a.close();
  });

  it('the response checker catches a response that left its document', async () => {
    const a = await app('full');
    const checker = new ResponseChecker([(await a.inject({ url: '/docs/full/openapi.json' })).json()]);
    const user = { id: '3f1c5b0e-6a53-4c1a-9d9e-1f2b3c4d5e6f', firstName: 'A', lastName: 'B', email: 'a@b.cd', phone: null, emailVerified: false, roles: [], createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(), deletedAt: null };
    const url = 'http://x/api/v1/users';
    expect(checker.check('POST', url, 201, 'application/json', user)).toEqual([]);
    expect(checker.check('POST', url, 201, 'application/json', { ...user, passwordHash: 'x' })).not.toEqual([]);
    expect(checker.check('POST', url, 201, 'application/json', { ...user, phone: '555' })).not.toEqual([]);
    expect(checker.check('POST', url, 200, 'application/json', user)).not.toEqual([]);
    expect(checker.check('GET', 'http://x/api/v1/nope', 200, 'application/json', {})).not.toEqual([]);
    await a.close();
  });

  it.each([
    ['full', ['/api/v1/users', '/api/v1/auth/generate-jwt'], ['/api/v1/user', '/api/v1/generate-jwt']],
    ['compact', ['/api/v1/user', '/api/v1/generate-jwt'], ['/api/v1/users', '/api/v1/auth/generate-jwt', '/.well-known/jwks.json']],
    ['', [], ['/api/v1/users', '/api/v1/user', '/api/v1/generate-jwt', '/docs']],
  ])('GATEWAY_PROFILES=%j mounts exactly its routes (health and metrics always)', async (profiles, mounted, absent) => {
    const a = await app(profiles);
    for (const url of ['/health', '/health/live', '/api/v1/health', '/metrics']) expect((await a.inject({ url })).statusCode).not.toBe(404);
    for (const url of mounted) expect([url, (await a.inject({ method: url.includes('jwt') ? 'POST' : 'GET', url })).statusCode]).not.toEqual([url, 404]);
    for (const url of absent) expect([url, (await a.inject({ method: url.includes('jwt') ? 'POST' : 'GET', url })).statusCode]).toEqual([url, 404]);
    await a.close();
  });
});
