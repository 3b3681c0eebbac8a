/**
 * The webhook endpoints' rules on the real PostgreSQL: the SSRF guard at registration and again at
 * connect time (DNS rebinding through a stub resolver), each refusal recorded; secret rotation
 * (two signatures during the grace window, one after); Ed25519 v1a; validation; and the events
 * for the audit trail, which never carry a secret.
 */
import { verify } from 'node:crypto';
import { SUBJECTS, eventsV1 } from '@iam/contracts';
import { AppError } from '@iam/platform';
import { type WebhookReceiver, eventually, startWebhookReceiver } from '@iam/platform/testing';
import { Webhook } from 'standardwebhooks';
import type { Resolver } from '../../infra/webhooks/guard';
import { publicKeyFrom } from '../../infra/webhooks/secrets';
import { type WebhookWorld, userCreated, webhookWorld } from '../../testing/webhooks';

const PUBLIC = '93.184.215.14';

/** What the stub DNS answers; `rebind.test` answers a public address first, loopback after. */
function stubResolver(): Resolver & { calls: string[] } {
  const calls: string[] = [];
  let rebinds = 0;
  const table: Record<string, string[]> = {
    'public.test': [PUBLIC],
    'internal.test': ['192.168.1.20'],
    'mixed.test': [PUBLIC, '10.1.2.3'],
    'metadata.test': ['169.254.169.254'],
    'ula.test': ['fd12:3456::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'cgnat.test': ['100.64.0.9'],
  };
  const resolve = (async (host: string) => {
    calls.push(host);
    if (host === 'rebind.test') return [{ address: rebinds++ === 0 ? PUBLIC : '127.0.0.1', family: 4 }];
    const a = table[host];
    if (!a) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as unknown as Resolver & { calls: string[] };
  resolve.calls = calls;
  return resolve;
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, reason: err.reason, fields: err.errors?.map((e) => e.field) };
    throw err;
  }
  throw new Error('not refused');
};

describe('webhook endpoints', () => {
  describe('the SSRF guard (WEBHOOK_ALLOW_PRIVATE off)', () => {
    let world: WebhookWorld;
    const resolve = stubResolver();

    beforeAll(async () => {
      world = await webhookWorld('webhook_ssrf', { allowPrivate: false, resolve, platformHosts: ['iam.example.com', '.svc.cluster.local'] });
    });
    afterAll(async () => {
      await world?.close();
    });

    const create = (url: string) => world.uc.create({ url, description: '', eventTypes: [], enabled: true, ed25519: false });

    it('refuses at registration loopback, private, link-local (metadata), unique-local, CGNAT, mapped, the platform\'s hosts, plain http and unresolvable names; each refusal is recorded', async () => {
      const urls = [
        'https://127.0.0.1/hook',
        'https://[::1]/hook',
        'https://10.0.0.1/hook',
        'https://169.254.169.254/latest/meta-data',
        'https://metadata.test/',
        'https://internal.test/hook',
        'https://mixed.test/hook',
        'https://ula.test/hook',
        'https://mapped.test/hook',
        'https://cgnat.test/hook',
        'https://[::ffff:10.0.0.1]/hook',
        'https://iam.example.com/hook',
        'https://identity.iam.svc.cluster.local/hook',
        'http://public.test/hook',
        'https://nowhere.test/hook',
      ];
      for (const url of urls) expect([url, await refusal(create(url))]).toEqual([url, { code: 'VALIDATION', reason: 'notification.webhook_url_refused', fields: ['url'] }]);
      const refused = (await world.outbox()).filter((e) => e.subject === SUBJECTS.webhookUrlRefused).map((e) => eventsV1.WebhookUrlRefused.decode(e.payload));
      expect(refused.map((r) => [r.url, r.stage, r.reason])).toEqual([
        ['https://127.0.0.1/hook', 'create', 'loopback'],
        ['https://[::1]/hook', 'create', 'loopback'],
        ['https://10.0.0.1/hook', 'create', 'private'],
        ['https://169.254.169.254/latest/meta-data', 'create', 'link_local'],
        ['https://metadata.test/', 'create', 'link_local'],
        ['https://internal.test/hook', 'create', 'private'],
        ['https://mixed.test/hook', 'create', 'private'],
        ['https://ula.test/hook', 'create', 'unique_local'],
        ['https://mapped.test/hook', 'create', 'loopback'],
        ['https://cgnat.test/hook', 'create', 'cgnat'],
        ['https://[::ffff:a00:1]/hook', 'create', 'private'],
        ['https://iam.example.com/hook', 'create', 'platform_host'],
        ['https://identity.iam.svc.cluster.local/hook', 'create', 'platform_host'],
        ['http://public.test/hook', 'create', 'scheme'],
        ['https://nowhere.test/hook', 'create', 'unresolvable'],
      ]);
      // Nothing was registered.
      expect((await world.uc.list({ page: 1, pageSize: 10 })).totalCount).toBe(0);
    });

    it('a URL changed to a refused one is refused too (stage "update"), and the endpoint keeps its old URL', async () => {
      const { endpoint } = await create('https://public.test/hook');
      expect(await refusal(world.uc.update(endpoint.id, { url: 'https://internal.test/x' }))).toEqual({ code: 'VALIDATION', reason: 'notification.webhook_url_refused', fields: ['url'] });
      expect((await world.uc.get(endpoint.id)).url).toBe('https://public.test/hook');
      const last = (await world.outbox()).filter((e) => e.subject === SUBJECTS.webhookUrlRefused).map((e) => eventsV1.WebhookUrlRefused.decode(e.payload)).pop()!;
      expect([last.endpointId, last.stage, last.reason, last.address]).toEqual([endpoint.id, 'update', 'private', '192.168.1.20']);
      await world.uc.remove(endpoint.id);
    });

    it('refuses again at connect time: a host that rebinds to loopback after registration gets no connection, and the refusal is recorded', async () => {
      const { endpoint } = await create('https://rebind.test:8443/hook');
      world.dispatcher({ allowPrivate: false, resolve, schedule: [0, 60] });
      await world.uc.sendTest(endpoint.id);
      await eventually(async () => (await world.uc.attempts(endpoint.id, { page: 1, pageSize: 10 })).totalCount === 1, 10_000);
      const [attempt] = (await world.uc.attempts(endpoint.id, { page: 1, pageSize: 10 })).items;
      expect(attempt).toMatchObject({ outcome: 'refused', statusCode: null, eventType: 'webhook.test' });
      expect(attempt!.error).toContain('loopback');
      const refused = (await world.outbox()).filter((e) => e.subject === SUBJECTS.webhookUrlRefused).map((e) => eventsV1.WebhookUrlRefused.decode(e.payload)).pop()!;
      expect([refused.endpointId, refused.stage, refused.reason, refused.address]).toEqual([endpoint.id, 'connect', 'loopback', '127.0.0.1']);
      // The registration asked once, the connection once more: the address connected to is the one checked.
      expect(resolve.calls.filter((h) => h === 'rebind.test')).toHaveLength(2);
    });
  });

  describe('secrets, rotation and signing', () => {
    let world: WebhookWorld;
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      world = await webhookWorld('webhook_secrets', { graceMs: 1_500 });
      receiver = await startWebhookReceiver();
      world.dispatcher();
    });
    afterAll(async () => {
      await receiver?.close();
      await world?.close();
    });

    const verifies = (secret: string, r: { body: string; id: string; timestamp: string; signature: string }) => {
      try {
        new Webhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
        return true;
      } catch {
        return false;
      }
    };

    it('during the grace window a delivery carries the new and the old signature; after it only the new one', async () => {
      const { endpoint, secret: old } = await world.uc.create({ url: `${receiver.origin}/rotate`, description: 'rotation', eventTypes: ['user.created'], enabled: true, ed25519: false });
      const rotated = await world.uc.rotate(endpoint.id);
      expect(rotated.secret).not.toBe(old);
      expect(rotated.endpoint.previousExpiresAt).not.toBeNull();
      await world.fanOut(userCreated(1));
      await eventually(() => receiver.received.filter((r) => r.path === '/rotate').length === 1, 10_000);
      const during = receiver.received.filter((r) => r.path === '/rotate')[0]!;
      expect(during.signature.split(' ')).toHaveLength(2);
      expect(verifies(rotated.secret, during)).toBe(true);
      expect(verifies(old, during)).toBe(true);
      await eventually(async () => (await world.uc.get(endpoint.id)).previousExpiresAt === null, 5_000, 100);
      await world.fanOut(userCreated(2));
      await eventually(() => receiver.received.filter((r) => r.path === '/rotate').length === 2, 10_000);
      const after = receiver.received.filter((r) => r.path === '/rotate')[1]!;
      expect(after.signature.split(' ')).toHaveLength(1);
      expect(verifies(rotated.secret, after)).toBe(true);
      expect(verifies(old, after)).toBe(false);
    });

    it('an endpoint with Ed25519 also carries a v1a signature its public key verifies', async () => {
      const { endpoint, secret } = await world.uc.create({ url: `${receiver.origin}/ed`, description: '', eventTypes: [], enabled: true, ed25519: true });
      expect(endpoint.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
      const messageId = await world.uc.sendTest(endpoint.id);
      await eventually(() => receiver.received.some((r) => r.path === '/ed'), 10_000);
      const r = receiver.received.find((x) => x.path === '/ed')!;
      expect(r.id).toBe(messageId);
      expect(JSON.parse(r.body)).toMatchObject({ type: 'webhook.test', data: { endpointId: endpoint.id } });
      const [v1, v1a] = r.signature.split(' ');
      expect(v1).toMatch(/^v1,/);
      expect(verifies(secret, r)).toBe(true);
      const sig = Buffer.from(v1a!.replace(/^v1a,/, ''), 'base64');
      expect(verify(null, Buffer.from(`${r.id}.${r.timestamp}.${r.body}`), publicKeyFrom(endpoint.publicKey), sig)).toBe(true);
      expect(verify(null, Buffer.from(`${r.id}.${r.timestamp}.${r.body}x`), publicKeyFrom(endpoint.publicKey), sig)).toBe(false);
    });

    it('refuses credentials in the URL, unknown event types and a fragment; every change is an event without a secret', async () => {
      const base = { description: '', enabled: true, ed25519: false };
      expect(await refusal(world.uc.create({ ...base, url: 'https://user:pw@example.com/x', eventTypes: [] }))).toMatchObject({ code: 'VALIDATION', fields: ['url'] });
      expect(await refusal(world.uc.create({ ...base, url: `${receiver.origin}/x#frag`, eventTypes: [] }))).toMatchObject({ code: 'VALIDATION', fields: ['url'] });
      expect(await refusal(world.uc.create({ ...base, url: `${receiver.origin}/x`, eventTypes: ['user.created', 'user.exploded'] }))).toMatchObject({ code: 'VALIDATION', fields: ['eventTypes'] });
      const { endpoint, secret } = await world.uc.create({ ...base, url: `${receiver.origin}/audit`, eventTypes: ['user.deleted', 'user.created'] });
      expect(endpoint.eventTypes).toEqual(['user.created', 'user.deleted']);
      await world.uc.update(endpoint.id, { description: 'CRM', eventTypes: ['order.placed'] });
      const { secret: next } = await world.uc.rotate(endpoint.id);
      await world.uc.remove(endpoint.id);
      await expect(world.uc.get(endpoint.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const all = (await world.outbox()).filter((e) => e.subject.startsWith('notification.webhook.'));
      const changes = new Set<string>([SUBJECTS.webhookCreated, SUBJECTS.webhookUpdated, SUBJECTS.webhookSecretRotated, SUBJECTS.webhookDeleted, SUBJECTS.webhookDisabled]);
      const these = all.filter((x) => changes.has(x.subject)).map((x) => ({ subject: x.subject, e: eventsV1.WebhookEndpointChanged.decode(x.payload) })).filter((x) => x.e.endpointId === endpoint.id);
      expect(these.map((x) => x.subject)).toEqual([SUBJECTS.webhookCreated, SUBJECTS.webhookUpdated, SUBJECTS.webhookSecretRotated, SUBJECTS.webhookDeleted]);
      expect(these[1]!.e.changedFields).toEqual(['description', 'eventTypes']);
      expect(these[1]!.e.before?.eventTypes).toEqual(['user.created', 'user.deleted']);
      for (const x of all) {
        const text = x.payload.toString('latin1');
        for (const s of [secret, next]) {
          expect(text).not.toContain(s);
          expect(text).not.toContain(s.slice(6));
        }
      }
    });
  });
});
