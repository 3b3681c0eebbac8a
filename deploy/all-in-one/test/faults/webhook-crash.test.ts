/**
 * Issue #38, "Dispatcher crash", against the real processes: notification SIGKILLed while it
 * delivers a batch of webhooks, then started again. Every event emitted (a role created through
 * the API) reaches the receiver: the distinct webhook-ids received equal the events emitted; a
 * message sent again after the crash carries the id it had (at least once, never lost).
 */
import { eventually, startWebhookReceiver, type WebhookReceiver } from '@iam/platform/testing';
import { ADMIN, Cluster, call, runnable } from './cluster';

const EVENTS = 300;

(runnable ? describe : describe.skip)('fault: the webhook dispatcher killed mid-batch', () => {
  let c: Cluster;
  let receiver: WebhookReceiver;
  let admin: string;

  beforeAll(async () => {
    // Each answer takes a while, so the kill lands in the middle of the deliveries.
    receiver = await startWebhookReceiver(() => ({ status: 204, delayMs: 15 }));
    c = await Cluster.start({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1,2,2,5,5,5,5,5', WEBHOOK_TIMEOUT_SECONDS: '2' } });
    await c.start('notification');
    admin = (await call(c.url, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    // The gateway started before notification: until its health checks see it, its routes answer 503.
    await eventually(async () => (await call(c.url, 'GET', '/api/v1/webhooks', { token: admin })).status === 200, 30_000, 200);
  });

  afterAll(async () => {
    if (process.env.FAULT_DEBUG) process.stdout.write(`==> notification\n${c.log('notification').slice(-6000)}\n`);
    await c?.shutdown();
    await receiver?.close();
  });

  it('SIGKILL while delivering, then a restart: the distinct webhook-ids received equal the events emitted', async () => {
    const made = await call(c.url, 'POST', '/api/v1/webhooks', { token: admin, body: { url: `${receiver.origin}/roles`, eventTypes: ['role.created'] } });
    expect(made.status).toBe(201);
    const roleIds: string[] = [];
    // Emitted in parallel groups through the API: each role's event commits with it (the directory's outbox).
    for (let i = 0; i < EVENTS; i += 10) {
      const group = await Promise.all(
        [...Array(Math.min(10, EVENTS - i)).keys()].map((k) => call(c.url, 'POST', '/api/v1/roles', { token: admin, body: { name: `crash-role-${i + k}-${Date.now()}`, description: '' } })),
      );
      for (const r of group) {
        expect(r.status).toBe(201);
        roleIds.push(r.json.id as string);
      }
      if (i === 50) await eventually(() => receiver.received.length >= 20, 30_000, 20);
    }
    // Mid-batch: some delivered, more queued.
    await eventually(() => receiver.received.length >= 60, 60_000, 10);
    const before = receiver.ids().size;
    expect(before).toBeLessThan(EVENTS);
    await c.stop('notification', 'SIGKILL');
    await c.start('notification');
    await eventually(() => receiver.ids().size >= EVENTS, 180_000, 200);
    await new Promise((r) => setTimeout(r, 500));
    const ids = receiver.ids();
    expect(ids.size).toBe(EVENTS);
    // Each role's event arrived, under one id; any repeat is the same message (same id, same body).
    const byId = new Map<string, string>();
    for (const r of receiver.received) {
      const seen = byId.get(r.id);
      if (seen !== undefined) expect(r.body).toBe(seen);
      byId.set(r.id, r.body);
    }
    const delivered = new Set([...byId.values()].map((b) => (JSON.parse(b) as { data: { id: string } }).data.id));
    expect(roleIds.filter((id) => !delivered.has(id))).toEqual([]);
  });
});
