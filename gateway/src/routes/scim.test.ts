/**
 * The gateway's SCIM routes (routes/scim.ts) with a stub directory: both media types accepted and
 * passed through as text, every answer `application/scim+json`, a missing token a 401 with the
 * SCIM error schema before any upstream call, 413 and 415 in SCIM's schema too, the status,
 * ETag and Location of the directory's answer relayed, and the base URL from PUBLIC_URL.
 */
import { HealthMonitor, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import type { scimV1 } from '@iam/contracts';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app';
import type { Authenticator } from '../auth/authenticator';
import { Denylist } from '../auth/denylist';
import { readGatewayConfig } from '../config';
import type { Upstreams } from '../upstreams';

const ORG = '7c2b5d1e-0000-4000-8000-000000000001';
const calls: scimV1.ScimRequest[] = [];
let answer: scimV1.ScimResponse = { status: 200, body: '{"schemas":[]}', etag: '', location: '' };
let app: FastifyInstance;

beforeAll(async () => {
  const config = readConfig({ GATEWAY_PROFILES: 'full', PUBLIC_URL: 'https://iam.example.com', RATE_LIMIT_SCIM_PER_MINUTE: '60', RATE_LIMIT_SCIM_BURST: '30', ...NO_SHEDDING }, readGatewayConfig);
  const scim = { handle: async (req: scimV1.ScimRequest) => (calls.push(req), answer) };
  const upstreams = new Proxy({} as Upstreams, { get: (_t, name: string) => (name === 'scim' ? scim : new Proxy({}, { get: () => async () => ({}) })) });
  const authenticator: Authenticator = { verify: async () => Promise.reject(new Error('not used')) };
  app = await buildApp({ config, logger: testLogger(), metrics: testMetrics(), health: new HealthMonitor({ logger: testLogger(), checks: {} }), upstreams, authenticator, denylist: new Denylist() });
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

beforeEach(() => {
  calls.length = 0;
});

const auth = { authorization: 'Bearer iamscim_token' };

describe('SCIM routes', () => {
  it('passes the request through (method, path, query, body as text, If-Match, token, base URL) and answers application/scim+json', async () => {
    answer = { status: 201, body: '{"id":"u1"}', etag: 'W/"1.2"', location: `https://iam.example.com/scim/v2/${ORG}/Users/u1` };
    for (const type of ['application/scim+json', 'application/json', 'application/scim+json; charset=utf-8']) {
      const res = await app.inject({ method: 'POST', url: `/scim/v2/${ORG}/Users?attributes=userName&filter=userName%20eq%20%22a%22`, headers: { ...auth, 'content-type': type, 'if-match': 'W/"0"' }, payload: '{"userName":"a"}' });
      expect(res.statusCode).toBe(201);
      expect(res.headers['content-type']).toBe('application/scim+json; charset=utf-8');
      expect(res.headers.etag).toBe('W/"1.2"');
      expect(res.headers.location).toBe(answer.location);
      expect(res.json()).toEqual({ id: 'u1' });
    }
    expect(calls[0]).toEqual({ organizationId: ORG, token: 'iamscim_token', method: 'POST', path: '/Users', query: { attributes: 'userName', filter: 'userName eq "a"' }, body: '{"userName":"a"}', ifMatch: 'W/"0"', baseUrl: `https://iam.example.com/scim/v2/${ORG}` });
  });

  it('a 204 has no body; GET of a nested path keeps the path', async () => {
    answer = { status: 204, body: '', etag: '', location: '' };
    const res = await app.inject({ method: 'DELETE', url: `/scim/v2/${ORG}/Groups/g1`, headers: auth });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    answer = { status: 200, body: '{}', etag: '', location: '' };
    await app.inject({ method: 'GET', url: `/scim/v2/${ORG}/Schemas/urn:ietf:params:scim:schemas:core:2.0:User`, headers: auth });
    expect(calls.map((c) => c.path)).toEqual(['/Groups/g1', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:User']);
  });

  it('no bearer token: 401 with the SCIM error schema and no upstream call', async () => {
    const res = await app.inject({ method: 'GET', url: `/scim/v2/${ORG}/Users` });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toBe('application/scim+json; charset=utf-8');
    expect(res.json()).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401' });
    expect(calls).toEqual([]);
  });

  it('a body over maxPayloadSize is a 413, another media type a 415, both in the SCIM error schema', async () => {
    const big = await app.inject({ method: 'POST', url: `/scim/v2/${ORG}/Bulk`, headers: { ...auth, 'content-type': 'application/scim+json' }, payload: `{"pad":"${'x'.repeat(1_048_577)}"}` });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '413' });
    const text = await app.inject({ method: 'POST', url: `/scim/v2/${ORG}/Users`, headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hi' });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ status: '415' });
    expect(calls).toEqual([]);
  });

  it('a connection beyond its rate limit gets 429 in the SCIM error schema, with Retry-After; another token is not held back', async () => {
    answer = { status: 200, body: '{}', etag: '', location: '' };
    const headers = { authorization: 'Bearer iamscim_busy' };
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await app.inject({ method: 'GET', url: `/scim/v2/${ORG}/Users`, headers })).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    const over = await app.inject({ method: 'GET', url: `/scim/v2/${ORG}/Users`, headers });
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
    expect(over.json()).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '429' });
    expect((await app.inject({ method: 'GET', url: `/scim/v2/${ORG}/Users`, headers: { authorization: 'Bearer iamscim_other' } })).statusCode).toBe(200);
  });

  it("the directory's refusals are relayed with their status", async () => {
    answer = { status: 404, body: '{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"404","detail":"no"}', etag: '', location: '' };
    const res = await app.inject({ method: 'GET', url: `/scim/v2/${ORG}/Users/x`, headers: auth });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: '404' });
  });
});
