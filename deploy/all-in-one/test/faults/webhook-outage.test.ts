/**
 * Issue #38, "Receiver outage", against the real processes: the receiver answers 503 for two
 * minutes while 1,000 events are emitted (roles created through the API), with a shortened retry
 * schedule that outlasts the outage. Afterwards every webhook-id has arrived, repeats share their
 * id, and nothing is lost. While the receiver is down only the first message of the endpoint's
 * line is tried (one request per retry, not one per message).
 */
import { eventually, startWebhookReceiver, type WebhookReceiver } from '@iam/platform/testing';
import { ADMIN, Cluster, call, runnable } from './cluster';

const EVENTS = 1_000;
const OUTAGE_MS = 120_000;

(runnable ? describe : describe.skip)('fault: a webhook receiver down for minutes', () => {
  let c: Cluster;
  let receiver: WebhookReceiver;
  let admin: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // 0+1+2+4+8+15+30+30+30+30+30+30 s: longer than the outage, so the first message outlives it.
    c = await Cluster.start({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,2,4,8,15,30,30,30,30,30,30', WEBHOOK_TIMEOUT_SECONDS: '5' } });
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

  it('503 for two minutes while 1,000 events are emitted: afterwards every webhook-id arrived, 0 lost', async () => {
    const made = await call(c.url, 'POST', '/api/v1/webhooks', { token: admin, body: { url: `${receiver.origin}/crm`, eventTypes: ['role.created'] } });
    expect(made.status).toBe(201);
    let down = true;
    receiver.respond = () => (down ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 });
    const outageStart = Date.now();
    const roleIds: string[] = [];
    for (let i = 0; i < EVENTS; i += 20) {
      const group = await Promise.all(
        [...Array(20).keys()].map((k) => call(c.url, 'POST', '/api/v1/roles', { token: admin, body: { name: `outage-role-${i + k}-${outageStart}`, description: '' }, timeoutMs: 30_000 })),
      );
      for (const r of group) {
        expect(r.status).toBe(201);
        roleIds.push(r.json.id as string);
      }
    }
    // The outage lasts its two minutes whatever the emitting took.
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - outageStart))));
    const duringOutage = receiver.received.length;
    // Only the head of the line was tried meanwhile.
    expect(receiver.ids().size).toBe(1);
    expect(duringOutage).toBeLessThan(20);
    down = false;
    await eventually(() => receiver.ids().size >= EVENTS, 180_000, 250);
    const delivered = new Map<string, string>();
    for (const r of receiver.received) {
      const seen = delivered.get(r.id);
      if (seen !== undefined) expect(r.body).toBe(seen);
      delivered.set(r.id, r.body);
    }
    expect(delivered.size).toBe(EVENTS);
    const roles = new Set([...delivered.values()].map((b) => (JSON.parse(b) as { data: { id: string } }).data.id));
    expect(roleIds.filter((id) => !roles.has(id))).toEqual([]);
    const metrics = await (await fetch(`http://127.0.0.1:${c.ports.ops.notification}/metrics`)).text();
    expect(metrics).toMatch(/webhook_attempts_total\{outcome="failed"\} \d+/);
    expect(metrics).toMatch(/webhook_dead_lettered_total 0/);
  });
});
