/**
 * Outgoing webhooks end to end (issue #38): the REST API through the gateway with real tokens
 * (webhooks.manage decides who gets in; problem+json for bad input), real directory events
 * delivered to a real receiver on loopback, verified by standardwebhooks and svix, their data the
 * same facts as the audit trail's entries; a test message, the attempts, replays, and the
 * endpoint's changes in the trail.
 */
import { randomUUID } from 'node:crypto';
import { type WebhookReceiver, eventually, startWebhookReceiver } from '@iam/platform/testing';
import { Webhook } from 'standardwebhooks';
import type * as SvixNs from 'svix';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail, userHolding } from './harness';

type SvixModule = typeof SvixNs;

jest.setTimeout(120_000);

interface Entry {
  action: string;
  actor: { type: string; id?: string };
  target: { type: string; id: string };
  changes: Array<{ field: string; before?: unknown; after?: unknown; redacted?: boolean }>;
}

describe('outgoing webhooks (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  let receiver: WebhookReceiver;
  let svix: SvixModule;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, { token: admin, ...opts });
  const problem = (r: { status: number; headers: Headers; json: { traceId?: string } }, status: number) => {
    expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({ status, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  };
  const trail = async (targetId: string) => ((await call('GET', `/api/v1/audit-events?targetId=${targetId}&pageSize=100`)).json.items as Entry[]).reverse();

  beforeAll(async () => {
    svix = await import('svix');
    receiver = await startWebhookReceiver();
    sys = await startTestSystem({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,0.2,0.4', WEBHOOK_DENY_HOSTS: 'iam.internal.example' } });
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
    await receiver?.close();
  });

  it('403 without webhooks.manage, 401 without a token; bad bodies are 400 problems', async () => {
    const other = await userHolding(sys.url(), admin, ['users.manage']);
    for (const [method, path] of [['GET', '/api/v1/webhooks'], ['POST', '/api/v1/webhooks'], ['GET', '/api/v1/webhooks/event-types'], ['POST', `/api/v1/webhooks/${randomUUID()}/secret`]] as const) {
      const body = method === 'POST' && path === '/api/v1/webhooks' ? { url: `${receiver.origin}/x` } : undefined;
      problem(await call(method, path, { token: other.token, body }), 403);
      problem(await http(sys.url(), method, path, { body }), 401);
    }
    problem(await call('POST', '/api/v1/webhooks', { body: { url: `${receiver.origin}/x`, secret: 'whsec_mine' } }), 400);
    problem(await call('POST', '/api/v1/webhooks', { body: { url: `${receiver.origin}/x`, eventTypes: ['user.exploded'] } }), 400);
    problem(await call('POST', '/api/v1/webhooks', { body: { url: 'not a url' } }), 400);
    const refused = await call('POST', '/api/v1/webhooks', { body: { url: 'https://iam.internal.example/hook' } });
    problem(refused, 400);
    expect(refused.json.errors).toEqual([{ field: 'body.url', message: 'refused (platform_host)' }]);
    problem(await call('GET', `/api/v1/webhooks/${randomUUID()}`), 404);
    problem(await call('GET', '/api/v1/webhooks/not-a-uuid'), 400);
    const types = await call('GET', '/api/v1/webhooks/event-types');
    expect(types.json.items.map((t: { type: string }) => t.type)).toEqual(expect.arrayContaining(['user.created', 'user.updated', 'user.deleted', 'user.locked', 'role.created', 'permission.deleted', 'session.started', 'session.ended', 'mfa.enrolled', 'mfa.removed', 'client.created', 'order.placed', 'webhook.test']));
  });

  it('registers an endpoint (the secret once), delivers directory events that both libraries verify, with the facts of the audit trail', async () => {
    const made = await call('POST', '/api/v1/webhooks', { body: { url: `${receiver.origin}/crm`, description: 'CRM', eventTypes: ['user.created', 'user.updated'] } });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe(`/api/v1/webhooks/${made.json.id}`);
    expect(made.headers.get('cache-control')).toBe('no-store');
    const secret = made.json.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const got = await call('GET', `/api/v1/webhooks?id=${made.json.id}`);
    expect(got.json).toMatchObject({ id: made.json.id, url: `${receiver.origin}/crm`, enabled: true, eventTypes: ['user.created', 'user.updated'], publicKey: null });
    expect(got.json.secret).toBeUndefined();
    expect(JSON.stringify((await call('GET', '/api/v1/webhooks')).json)).not.toContain(secret.slice(6));

    const email = uniqueEmail('hooked');
    const user = await call('POST', '/api/v1/users', { body: { firstName: 'Hook', lastName: 'Ed', email, password: strongPassword(), roles: [] } });
    expect(user.status).toBe(201);
    const updated = await call('PUT', `/api/v1/users/${user.json.id}`, { body: { firstName: 'Hooked', phone: 5550123 } });
    expect(updated.status).toBe(200);
    await eventually(() => receiver.received.filter((r) => r.path === '/crm').length >= 2, 20_000, 50);
    const [c, u] = receiver.received.filter((r) => r.path === '/crm');
    const payloads = [c!, u!].map((r) => {
      const headers = { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature };
      new svix.Webhook(secret).verify(r.body, headers);
      return new Webhook(secret).verify(r.body, headers) as { type: string; data: Record<string, unknown> & { changes?: unknown } };
    });
    expect(payloads.map((p) => p.type)).toEqual(['user.created', 'user.updated']);
    expect(payloads[0]!.data).toMatchObject({ id: user.json.id, email, firstName: 'Hook', lastName: 'Ed', roles: [], emailVerified: false });
    expect(JSON.stringify(payloads)).not.toMatch(/password|hash/i);
    // The same facts, the same way, as the trail's entry for the update.
    const entry = await eventually(async () => (await trail(user.json.id)).find((e) => e.action === 'user.updated'), 15_000, 100);
    expect(payloads[1]!.data.changes).toEqual(entry.changes);
    expect(entry.changes).toEqual([
      { field: 'firstName', before: 'Hook', after: 'Hooked' },
      { field: 'phone', before: null, after: 5550123 },
    ]);
  });

  it('a test message, the attempts (status, latency, first bytes), a replay with the same webhook-id, a range replay; every change in the trail', async () => {
    const made = await call('POST', '/api/v1/webhooks', { body: { url: `${receiver.origin}/ops`, eventTypes: ['role.created'], ed25519: true } });
    const id = made.json.id as string;
    expect(made.json.publicKey).toMatch(/^whpk_/);
    receiver.respond = (r) => (r.path === '/ops' ? { status: 200, body: 'thanks, got it '.repeat(100) } : { status: 204 });
    const test = await call('POST', `/api/v1/webhooks/${id}/test`);
    expect(test.status).toBe(202);
    await eventually(() => receiver.received.some((r) => r.id === test.json.messageId), 10_000, 50);
    const attempts = await eventually(async () => {
      const a = await call('GET', `/api/v1/webhooks/${id}/attempts`);
      return a.json.totalCount === 1 ? a.json : undefined;
    }, 10_000, 100);
    expect(attempts.items[0]).toMatchObject({ messageId: test.json.messageId, eventType: 'webhook.test', attempt: 1, statusCode: 200, outcome: 'delivered' });
    expect(attempts.items[0].durationMs).toEqual(expect.any(Number));
    expect(attempts.items[0].response).toBe('thanks, got it '.repeat(100).slice(0, 512));
    const first = receiver.received.find((r) => r.id === test.json.messageId)!;
    await eventually(() => Math.floor(Date.now() / 1000) > Number(first.timestamp), 3_000, 50);
    const replay = await call('POST', `/api/v1/webhooks/${id}/messages/${test.json.messageId}/replay`);
    expect(replay.status).toBe(202);
    await eventually(() => receiver.received.filter((r) => r.id === test.json.messageId).length === 2, 10_000, 50);
    const second = receiver.received.filter((r) => r.id === test.json.messageId)[1]!;
    expect([second.body === first.body, second.timestamp !== first.timestamp, second.signature !== first.signature]).toEqual([true, true, true]);
    problem(await call('POST', `/api/v1/webhooks/${id}/messages/msg_${'0'.repeat(32)}/replay`), 404);
    const range = await call('POST', `/api/v1/webhooks/${id}/replay`, { body: { since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date().toISOString() } });
    expect(range.json).toEqual({ replayed: 0 });
    problem(await call('POST', `/api/v1/webhooks/${id}/replay`, { body: { since: new Date().toISOString(), until: new Date(Date.now() - 1_000).toISOString() } }), 400);
    const rotated = await call('POST', `/api/v1/webhooks/${id}/secret`);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.previousSecretExpiresAt).toEqual(expect.any(String));
    expect((await call('PUT', `/api/v1/webhooks/${id}`, { body: { enabled: false } })).json.enabled).toBe(false);
    expect((await call('DELETE', `/api/v1/webhooks/${id}`)).status).toBe(204);
    problem(await call('DELETE', `/api/v1/webhooks/${id}`), 404);
    const actions = await eventually(async () => {
      const t = await trail(id);
      return t.length >= 6 ? t : undefined;
    }, 15_000, 100);
    expect(actions.map((e) => e.action)).toEqual(['webhook.created', 'webhook.tested', 'webhook.messages.replayed', 'webhook.secret.rotated', 'webhook.updated', 'webhook.deleted']);
    expect(actions.every((e) => e.actor.type === 'user')).toBe(true);
    expect(JSON.stringify(actions)).not.toContain(rotated.json.secret.slice(6));
  });
});
