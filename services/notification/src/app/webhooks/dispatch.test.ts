/**
 * Webhook delivery on the real PostgreSQL to real HTTP receivers on loopback: signatures that
 * `standardwebhooks` and `svix` both verify (and both refuse when one byte or the timestamp is
 * off), per-endpoint order through failures, the schedule to a dead letter and the replays, 410
 * and failing-for-days disabling, and two dispatchers never sending one message at once.
 */
import { SUBJECTS, eventsV1 } from '@iam/contracts';
import { type WebhookReceiver, eventually, startWebhookReceiver } from '@iam/platform/testing';
import { Webhook } from 'standardwebhooks';
import type * as SvixNs from 'svix';
import { createSigner } from '../../infra/webhooks/signer';
import { type WebhookWorld, incoming, userCreated, webhookWorld } from '../../testing/webhooks';

type SvixModule = typeof SvixNs;
let svix: SvixModule;

describe('webhook delivery', () => {
  let world: WebhookWorld;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    svix = await import('svix');
    world = await webhookWorld('webhook_dispatch');
  });
  afterAll(async () => {
    await world?.close();
  });
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await world.stopDispatchers();
    await receiver.close();
  });

  const endpoint = async (path: string, eventTypes: string[] = ['user.created'], more: { ed25519?: boolean } = {}) =>
    world.uc.create({ url: `${receiver.origin}${path}`, description: path, eventTypes, enabled: true, ed25519: more.ed25519 ?? false });
  const emailOf = (body: string) => (JSON.parse(body) as { data: { email: string } }).data.email;
  const at = (path: string) => receiver.received.filter((r) => r.path === path);

  it('signs every delivery so that standardwebhooks and svix verify it; one changed byte or a stale timestamp fails both', async () => {
    const { endpoint: ep, secret } = await endpoint('/verify');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    world.dispatcher();
    const events = [0, 1, 2, 3, 4].map((i) => userCreated(i));
    for (const e of events) await world.fanOut(e);
    // A type the endpoint does not subscribe to is not sent.
    await world.fanOut(incoming(SUBJECTS.roleCreated, eventsV1.RoleChanged.create({ roleId: ep.id, name: 'x', description: '' })));
    await eventually(() => at('/verify').length >= 5, 10_000);
    const got = at('/verify');
    expect(got.map((r) => r.id)).toEqual(events.map((e) => `msg_${e.id.replace(/-/g, '')}`));
    const std = new Webhook(secret);
    const sx = new svix.Webhook(secret);
    for (const r of got) {
      const headers = { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature };
      expect(r.signature.split(' ')).toHaveLength(1);
      const a = std.verify(r.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
      sx.verify(r.body, headers);
      expect(Object.keys(a)).toEqual(['type', 'timestamp', 'data']);
      expect(a.type).toBe('user.created');
      expect(r.headers['content-type']).toBe('application/json');
      // One byte changed: refused by both.
      const i = r.body.indexOf('@');
      const tampered = `${r.body.slice(0, i)}#${r.body.slice(i + 1)}`;
      expect(Buffer.byteLength(tampered)).toBe(Buffer.byteLength(r.body));
      expect(() => std.verify(tampered, headers)).toThrow();
      expect(() => sx.verify(tampered, headers)).toThrow();
    }
    // A valid signature on a timestamp outside the tolerance (5 minutes): refused by both.
    const old = new Date(Date.now() - 10 * 60_000);
    const stale = createSigner({ secrets: [secret], ed25519: [] }).headers(got[0]!.id, old, got[0]!.body);
    expect(() => std.verify(got[0]!.body, stale)).toThrow(/timestamp/i);
    expect(() => sx.verify(got[0]!.body, stale)).toThrow(/timestamp/i);
    expect(got.map((r) => emailOf(r.body))).toEqual(['user0@example.com', 'user1@example.com', 'user2@example.com', 'user3@example.com', 'user4@example.com']);
  });

  it("keeps an endpoint's order while it fails (one request per retry), and a message the receiver refuses steps out of line", async () => {
    const { endpoint: ep } = await endpoint('/order');
    let down = true;
    receiver.respond = (r) => {
      if (down) return { status: 503 };
      if (emailOf(r.body) === 'user12@example.com') return { status: 422, body: 'bad content' };
      return { status: 200, body: 'ok' };
    };
    world.dispatcher({ schedule: [0, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3] });
    for (let i = 10; i < 20; i++) await world.fanOut(userCreated(i));
    await eventually(() => at('/order').length >= 3, 10_000);
    // While the endpoint fails only the first of its line is tried.
    expect(new Set(at('/order').map((r) => emailOf(r.body)))).toEqual(new Set(['user10@example.com']));
    down = false;
    await eventually(async () => (await world.uc.messages(ep.id, { page: 1, pageSize: 100, status: 'delivered' })).totalCount === 9, 10_000);
    const delivered = at('/order').filter((r) => emailOf(r.body) !== 'user12@example.com' && receiver.respond(r).status === 200);
    const order = [...new Set(delivered.map((r) => emailOf(r.body)))];
    expect(order).toEqual([10, 11, 13, 14, 15, 16, 17, 18, 19].map((i) => `user${i}@example.com`));
    // The refused one is retried on its own schedule, then dead; its attempts say why.
    await eventually(async () => (await world.uc.messages(ep.id, { page: 1, pageSize: 100, status: 'dead' })).totalCount === 1, 15_000);
    const attempts = await world.uc.attempts(ep.id, { page: 1, pageSize: 100 });
    const refused = attempts.items.filter((a) => a.statusCode === 422);
    expect(refused.length).toBe(12);
    expect(refused[0]!.response).toBe('bad content');
    expect(attempts.items.filter((a) => a.statusCode === 503).every((a) => a.outcome === 'failed')).toBe(true);
  });

  it('dead-letters after the last attempt; a replay sends the same webhook-id with a new timestamp and signature; a range replays every dead letter', async () => {
    const { endpoint: ep, secret } = await endpoint('/dead');
    receiver.respond = () => ({ status: 500 });
    world.dispatcher();
    const events = [30, 31, 32].map((i) => userCreated(i));
    for (const e of events) await world.fanOut(e);
    await eventually(async () => (await world.uc.messages(ep.id, { page: 1, pageSize: 10, status: 'dead' })).totalCount === 3, 15_000);
    const first = at('/dead').filter((r) => r.id === `msg_${events[0]!.id.replace(/-/g, '')}`);
    expect(first).toHaveLength(3); // the schedule: 3 attempts
    receiver.respond = () => ({ status: 204 });
    // A replay in a later second, so the timestamp (seconds) must differ.
    const last = Number(first[first.length - 1]!.timestamp);
    await eventually(() => Math.floor(Date.now() / 1000) > last, 3_000, 50);
    const replayed = await world.uc.replayOne(ep.id, first[0]!.id);
    expect(replayed.status).toBe('pending');
    await eventually(() => at('/dead').filter((r) => r.id === first[0]!.id).length === 4, 10_000);
    const again = at('/dead').filter((r) => r.id === first[0]!.id)[3]!;
    expect(again.body).toBe(first[0]!.body);
    expect(Number(again.timestamp)).toBeGreaterThan(last);
    expect(again.signature).not.toBe(first[0]!.signature);
    new Webhook(secret).verify(again.body, { 'webhook-id': again.id, 'webhook-timestamp': again.timestamp, 'webhook-signature': again.signature });
    // The other two, by time range.
    const n = await world.uc.replayFailed(ep.id, new Date(Date.now() - 3_600_000), new Date(Date.now() + 1_000));
    expect(n).toBe(2);
    await eventually(async () => (await world.uc.messages(ep.id, { page: 1, pageSize: 10, status: 'delivered' })).totalCount === 3, 10_000);
    const subjects = (await world.outbox()).map((e) => e.subject);
    expect(subjects.filter((s) => s === SUBJECTS.webhookReplayed)).toHaveLength(2);
  });

  it('410 Gone disables the endpoint at once and says so; its messages wait for it to be enabled again', async () => {
    const { endpoint: ep } = await endpoint('/gone');
    receiver.respond = () => ({ status: 410 });
    world.dispatcher();
    await world.fanOut(userCreated(40));
    await eventually(async () => (await world.uc.get(ep.id)).enabled === false, 10_000);
    expect((await world.uc.get(ep.id)).disabledReason).toBe('gone');
    const disabled = (await world.outbox()).filter((e) => e.subject === SUBJECTS.webhookDisabled).map((e) => eventsV1.WebhookEndpointChanged.decode(e.payload));
    expect(disabled.map((d) => [d.endpointId, d.reason])).toContainEqual([ep.id, 'gone']);
    // Nothing goes to a disabled endpoint, and new events are not queued for it.
    await world.fanOut(userCreated(41));
    expect((await world.uc.messages(ep.id, { page: 1, pageSize: 10 })).totalCount).toBe(1);
    receiver.respond = () => ({ status: 204 });
    await world.uc.update(ep.id, { enabled: true });
    await eventually(async () => (await world.uc.messages(ep.id, { page: 1, pageSize: 10, status: 'delivered' })).totalCount === 1, 10_000);
    expect((await world.uc.get(ep.id)).disabledReason).toBe('');
  });

  it('an endpoint failing for longer than the limit is disabled, and the trail is told', async () => {
    const w = await webhookWorld('webhook_failing', { disableAfterMs: 500 });
    const r = await startWebhookReceiver(() => ({ status: 502 }));
    try {
      const { endpoint: ep } = await w.uc.create({ url: `${r.origin}/x`, description: '', eventTypes: [], enabled: true, ed25519: false });
      w.dispatcher({ schedule: [0, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3] });
      await w.fanOut(userCreated(50));
      await eventually(async () => (await w.uc.get(ep.id)).disabledReason === 'failing', 10_000);
      const events = (await w.outbox()).filter((e) => e.subject === SUBJECTS.webhookDisabled).map((e) => eventsV1.WebhookEndpointChanged.decode(e.payload));
      expect(events).toEqual([expect.objectContaining({ endpointId: ep.id, reason: 'failing', changedFields: ['enabled'] })]);
      // Still queued: nothing is lost while it is off.
      expect((await w.uc.messages(ep.id, { page: 1, pageSize: 10, status: 'pending' })).totalCount).toBe(1);
    } finally {
      await r.close();
      await w.close();
    }
  });

  it("a slow receiver: the lane records (and so keeps its lease) before the lease could run out; nothing is sent twice", async () => {
    const w = await webhookWorld('webhook_slow');
    const r = await startWebhookReceiver(() => ({ status: 204, delayMs: 150 }));
    try {
      await w.uc.create({ url: `${r.origin}/slow`, description: '', eventTypes: [], enabled: true, ed25519: false });
      for (let i = 0; i < 12; i++) await w.fanOut(userCreated(i));
      // A 1.5 s lease: one batch of 12 answers of 150 ms would outlast it without the cut.
      w.dispatcher({ leaseMs: 1_500 });
      w.dispatcher({ leaseMs: 1_500 });
      await eventually(() => r.received.length >= 12, 20_000);
      await new Promise((res) => setTimeout(res, 2_000));
      expect(r.received.map((x) => emailOf(x.body))).toEqual([...Array(12).keys()].map((k) => `user${k}@example.com`));
    } finally {
      await r.close();
      await w.close();
    }
  });

  it('two dispatchers on one database send every message once and never one message twice at once', async () => {
    const w = await webhookWorld('webhook_replicas');
    const r = await startWebhookReceiver(() => ({ status: 200, delayMs: 2 }));
    try {
      for (let i = 0; i < 4; i++) await w.uc.create({ url: `${r.origin}/r${i}`, description: '', eventTypes: [], enabled: true, ed25519: false });
      for (let i = 0; i < 100; i++) await w.fanOut(userCreated(i));
      w.dispatcher();
      w.dispatcher();
      await eventually(() => r.received.length >= 400, 20_000);
      await new Promise((res) => setTimeout(res, 200));
      expect(r.received).toHaveLength(400);
      for (let i = 0; i < 4; i++) {
        const lane = r.received.filter((x) => x.path === `/r${i}`);
        expect(new Set(lane.map((x) => x.id)).size).toBe(100);
        // Each endpoint's messages arrive in the order of their events.
        expect(lane.map((x) => emailOf(x.body))).toEqual([...Array(100).keys()].map((k) => `user${k}@example.com`));
      }
      expect(r.inFlight.maxPerId).toBe(1);
    } finally {
      await r.close();
      await w.close();
    }
  });
});
