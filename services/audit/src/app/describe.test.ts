/**
 * What the trail records of each change, on the real PostgreSQL: every changed field of every
 * directory, identity and commerce event with its before and after value (secrets only as
 * redacted), the actor from the event's headers; and who may read the trail (audit.read now).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type EventSubject, SUBJECTS, encodeEvent, eventsV1 } from '@iam/contracts';
import { outboxUnitOfWork } from '@iam/platform';
import type { IncomingEvent } from '@iam/platform/bus';
import { type MigratedDatabase, TestAccess, migratedTestDatabase } from '@iam/platform/testing';
import { checkpointSigner } from '../domain/checkpoint';
import type { AuditEntry } from '../domain/entry';
import type { AuditUnitOfWork } from '../domain/ports';
import { entities, migrations } from '../infra/schema';
import { PgAuditLog, PgProjection } from '../infra/store';
import { auditQueries } from './query';
import { AUDIT_READ, forReaders } from './readers';
import { createRecorder } from './record';


/** The trail's queries over `uow`, verification against an empty checkpoint log (not what these tests look at). */
const withQueries = (uow: Parameters<typeof auditQueries>[0]) => () =>
  auditQueries(uow, { checkpoints: { publish: async () => undefined, read: async () => [] }, key: checkpointSigner(randomBytes(32)), retentionDays: 365 });

describe('audit trail: before and after of every change', () => {
  let db: MigratedDatabase;
  let uow: AuditUnitOfWork;
  const queries = () => withQueries(uow)();
  let record: (e: IncomingEvent) => Promise<void>;
  const admin = randomUUID();
  const byAdmin = { 'iam-actor-sub': admin, 'iam-client-ip': '203.0.113.7' };

  function event<S extends EventSubject>(subject: S, payload: Parameters<typeof encodeEvent<S>>[1], headers: Record<string, string> = byAdmin): IncomingEvent {
    return { id: randomUUID(), subject, data: encodeEvent(subject, payload), occurredAt: new Date(), deliveryCount: 1, headers };
  }
  /** The entries about `targetId`, oldest first. */
  const trail = async (targetId: string): Promise<AuditEntry[]> => [...(await queries().list({ pageSize: 100, targetId })).items].reverse();
  const changes = async (targetId: string) => (await trail(targetId)).map((e) => [e.action, e.changes]);

  beforeAll(async () => {
    db = await migratedTestDatabase('audit_changes', { entities, migrations });
    uow = outboxUnitOfWork(db.ds, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
    record = createRecorder(uow);
    await record(event(SUBJECTS.userCreated, eventsV1.UserChanged.create({ userId: admin, email: 'root@example.com', firstName: 'Root', lastName: 'Admin', roles: ['Administrator'] }), {}));
  });

  afterAll(async () => {
    await db?.close();
  });

  it('a bulk import is one entry with its counts: its users\' user.created are folded into it (the projection still learns them)', async () => {
    const job = randomUUID();
    const imported = randomUUID();
    await record(event(SUBJECTS.userCreated, eventsV1.UserChanged.create({ userId: imported, email: 'imported@example.com', firstName: 'Im', lastName: 'Ported', importJobId: job })));
    await record(event(SUBJECTS.usersImported, { jobId: job, created: 1, skipped: 2, refused: 3, source: 'api' }));
    expect(await changes(imported)).toEqual([]);
    expect(await changes(job)).toEqual([
      [
        'users.imported',
        [
          { field: 'created', after: 1 },
          { field: 'skipped', after: 2 },
          { field: 'refused', after: 3 },
          { field: 'source', after: 'api' },
        ],
      ],
    ]);
    // Acting as the imported user later names them (the projection learned the user).
    await record(event(SUBJECTS.tokenRevoked, { userId: imported, jti: randomUUID(), expiresAt: new Date() }, { 'iam-actor-sub': imported }));
    expect((await trail(imported))[0]?.actor).toEqual({ type: 'user', id: imported, email: 'imported@example.com' });
  });

  it('a user: created with each field that has a value; updates name each changed field before and after (phone, email, emailVerified, roles); the password only as redacted', async () => {
    const id = randomUUID();
    const v1 = { userId: id, email: 'ann@example.com', firstName: 'Ann', lastName: 'Lee', roles: ['Support'], phone: 5550100, emailVerified: false };
    await record(event(SUBJECTS.userCreated, eventsV1.UserChanged.create(v1)));
    const before = (u: typeof v1) => ({ email: u.email, firstName: u.firstName, lastName: u.lastName, roles: u.roles, phone: u.phone, emailVerified: u.emailVerified });
    const v2 = { ...v1, emailVerified: true };
    await record(event(SUBJECTS.userUpdated, eventsV1.UserChanged.create({ ...v2, changedFields: ['emailVerified'], before: before(v1) }), {}));
    const v3 = { ...v2, email: 'ann.lee@example.com', emailVerified: false, phone: undefined as unknown as number, roles: ['Auditor', 'Support'] };
    await record(event(SUBJECTS.userUpdated, eventsV1.UserChanged.create({ ...v3, changedFields: ['email', 'phone', 'password', 'roles', 'emailVerified'], before: before(v2) })));
    expect(await changes(id)).toEqual([
      [
        'user.created',
        [
          { field: 'email', after: 'ann@example.com' },
          { field: 'firstName', after: 'Ann' },
          { field: 'lastName', after: 'Lee' },
          { field: 'phone', after: 5550100 },
          { field: 'emailVerified', after: false },
          { field: 'roles', after: ['Support'] },
        ],
      ],
      ['user.updated', [{ field: 'emailVerified', before: false, after: true }]],
      [
        'user.roles.changed',
        [
          { field: 'email', before: 'ann@example.com', after: 'ann.lee@example.com' },
          { field: 'phone', before: 5550100, after: null },
          { field: 'password', redacted: true },
          { field: 'roles', before: ['Support'], after: ['Auditor', 'Support'] },
          { field: 'emailVerified', before: true, after: false },
        ],
      ],
    ]);
    const [, verified, changed] = await trail(id);
    expect(verified!.actor).toEqual({ type: 'system' });
    expect(changed!.actor).toEqual({ type: 'user', id: admin, email: 'root@example.com' });
  });

  it('roles and permissions: a description change names both values; the name and description of a new or deleted one', async () => {
    const role = randomUUID();
    await record(event(SUBJECTS.roleCreated, eventsV1.RoleChanged.create({ roleId: role, name: 'Support', description: 'Answers tickets' })));
    const was = { name: 'Support', description: 'Answers tickets' };
    await record(event(SUBJECTS.roleUpdated, eventsV1.RoleChanged.create({ roleId: role, name: 'Support', description: 'Answers tickets and calls', changedFields: ['description'], before: was })));
    await record(event(SUBJECTS.roleUpdated, eventsV1.RoleChanged.create({ roleId: role, name: 'Helpdesk', description: 'Helps', changedFields: ['name', 'description'], before: { ...was, description: 'Answers tickets and calls' } })));
    await record(event(SUBJECTS.roleDeleted, eventsV1.RoleChanged.create({ roleId: role, name: 'Helpdesk', description: 'Helps' })));
    expect(await changes(role)).toEqual([
      ['role.created', [{ field: 'name', after: 'Support' }, { field: 'description', after: 'Answers tickets' }]],
      ['role.updated', [{ field: 'description', before: 'Answers tickets', after: 'Answers tickets and calls' }]],
      ['role.updated', [{ field: 'name', before: 'Support', after: 'Helpdesk' }, { field: 'description', before: 'Answers tickets and calls', after: 'Helps' }]],
      ['role.deleted', [{ field: 'name', before: 'Helpdesk' }, { field: 'description', before: 'Helps' }]],
    ]);
    const permission = randomUUID();
    await record(event(SUBJECTS.permissionUpdated, eventsV1.PermissionChanged.create({ permissionId: permission, name: 'reports.read', description: 'Reads reports', changedFields: ['description'], before: { name: 'reports.read', description: '' } })));
    expect(await changes(permission)).toEqual([['permission.updated', [{ field: 'description', before: '', after: 'Reads reports' }]]]);
  });

  it('a link moved to another permission names the permission before and after', async () => {
    const [role, from, to] = [randomUUID(), randomUUID(), randomUUID()];
    const ends = { roleId: role, roleName: 'Support' };
    await record(
      event(SUBJECTS.rolePermissionUpdated, eventsV1.RolePermissionChanged.create({ linkId: randomUUID(), ...ends, permissionId: to, permissionName: 'b.read', before: { ...ends, permissionId: from, permissionName: 'a.read' } })),
    );
    expect(await changes(role)).toEqual([['role.permission.changed', [{ field: 'permission', before: { id: from, name: 'a.read' }, after: { id: to, name: 'b.read' } }]]]);
  });

  it('catalog administration: created, a price set to 1 and back, archived, reactivated, stock adjusted; each by its actor, with before and after', async () => {
    const id = randomUUID();
    const p = { sku: 'LAMP-1', name: 'Lamp', description: '', priceMinor: 1_500, currency: 'EUR', status: 'ACTIVE', onHand: 3 };
    const change = (subject: EventSubject, before: typeof p, after: typeof p, changedFields: string[]) =>
      record(event(subject as typeof SUBJECTS.productUpdated, { productId: id, before, after, changedFields }));
    await record(event(SUBJECTS.productCreated, { productId: id, after: p, before: undefined, changedFields: [] }));
    await change(SUBJECTS.productUpdated, p, { ...p, priceMinor: 1 }, ['priceMinor']);
    await change(SUBJECTS.productUpdated, { ...p, priceMinor: 1 }, p, ['priceMinor']);
    await change(SUBJECTS.productArchived, p, { ...p, status: 'ARCHIVED' }, ['status']);
    await change(SUBJECTS.productReactivated, { ...p, status: 'ARCHIVED' }, p, ['status']);
    await change(SUBJECTS.productStockAdjusted, p, { ...p, onHand: 10 }, ['onHand']);
    const entries = await trail(id);
    expect(entries.every((e) => e.actor.id === admin && e.target.type === 'product' && e.clientIp === '203.0.113.7')).toBe(true);
    expect(entries.map((e) => [e.action, e.changes])).toEqual([
      [
        'product.created',
        [
          { field: 'sku', after: 'LAMP-1' },
          { field: 'name', after: 'Lamp' },
          { field: 'priceMinor', after: 1_500 },
          { field: 'currency', after: 'EUR' },
          { field: 'status', after: 'ACTIVE' },
          { field: 'onHand', after: 3 },
        ],
      ],
      ['product.updated', [{ field: 'priceMinor', before: 1_500, after: 1 }]],
      ['product.updated', [{ field: 'priceMinor', before: 1, after: 1_500 }]],
      ['product.archived', [{ field: 'status', before: 'ACTIVE', after: 'ARCHIVED' }]],
      ['product.reactivated', [{ field: 'status', before: 'ARCHIVED', after: 'ACTIVE' }]],
      ['product.stock.adjusted', [{ field: 'onHand', before: 3, after: 10 }]],
    ]);
  });

  it('a cancelled order: its status before and after', async () => {
    const order = { orderId: randomUUID(), customerId: admin, customerEmail: '', lines: [], totalMinor: 0, currency: 'EUR', placedAt: new Date() };
    await record(event(SUBJECTS.orderCancelled, order, {}));
    const [cancelled] = await trail(order.orderId);
    expect(cancelled!.changes[0]).toEqual({ field: 'status', before: 'placed', after: 'cancelled' });
  });

  it('the OpenID provider: consent by the user, with its scopes; a window of tokens issued to a client as one tally; a refresh token reused, with its client', async () => {
    const client = `rp-${randomUUID()}`;
    await record(event(SUBJECTS.consentGranted, { userId: admin, clientId: client, scopes: ['openid', 'email'] }, { 'iam-actor-sub': admin, 'iam-client-ip': '203.0.113.8' }));
    const windowStart = new Date('2026-01-01T00:00:00Z');
    const windowEnd = new Date('2026-01-01T00:01:00Z');
    await record(event(SUBJECTS.clientTokensIssued, { clientId: client, count: 42, byGrantType: { client_credentials: 40, refresh_token: 2 }, windowStart, windowEnd }, {}));
    await record(event(SUBJECTS.refreshReuseDetected, { userId: admin, familyId: `grant-${client}`, revoked: 0, clientId: client }, {}));
    const reuse = (await trail(admin)).find((e) => e.action === 'refresh.reuse_detected');
    expect(reuse!.changes).toEqual([
      { field: 'client', after: client },
      { field: 'grant', after: `grant-${client}` },
    ]);
    const [consent, tally] = await trail(client);
    expect(consent).toMatchObject({ action: 'consent.granted', actor: { type: 'user', id: admin, email: 'root@example.com' }, target: { type: 'client', id: client }, clientIp: '203.0.113.8' });
    expect(consent!.changes).toEqual([{ field: 'scopes', after: ['email', 'openid'] }]);
    expect(tally).toMatchObject({ action: 'client.tokens_issued', actor: { type: 'system' }, target: { type: 'client', id: client } });
    expect(tally!.changes).toEqual([
      { field: 'count', after: 42 },
      { field: 'byGrantType', after: { client_credentials: 40, refresh_token: 2 } },
      { field: 'windowStart', after: windowStart.toISOString() },
      { field: 'windowEnd', after: windowEnd.toISOString() },
    ]);
  });

  it('outgoing webhooks: an endpoint created, changed, its secret rotated (redacted), disabled by the platform with its reason, a URL refused, messages replayed', async () => {
    const id = randomUUID();
    const state = { url: 'https://crm.example.com/hooks', description: 'CRM', eventTypes: ['user.deleted', 'user.created'], enabled: true, ed25519: false };
    const changed = (subject: EventSubject, p: Partial<eventsV1.WebhookEndpointChanged>, headers?: Record<string, string>) =>
      record(event(subject as typeof SUBJECTS.webhookCreated, eventsV1.WebhookEndpointChanged.create({ endpointId: id, ...p }), headers));
    await changed(SUBJECTS.webhookCreated, { after: state });
    await changed(SUBJECTS.webhookUpdated, { after: { ...state, description: 'CRM (EU)' }, before: state, changedFields: ['description'] });
    const until = new Date('2026-01-02T00:00:00Z');
    await changed(SUBJECTS.webhookSecretRotated, { after: state, previousSecretExpiresAt: until });
    await changed(SUBJECTS.webhookDisabled, { after: { ...state, enabled: false }, before: state, changedFields: ['enabled'], reason: 'gone' }, {});
    await record(event(SUBJECTS.webhookUrlRefused, { endpointId: id, url: state.url, stage: 'connect', reason: 'loopback', address: '127.0.0.1' }, {}));
    await record(event(SUBJECTS.webhookReplayed, { endpointId: id, messageId: '', since: new Date('2026-01-01T00:00:00Z'), until, count: 3 }));
    const entries = await trail(id);
    expect(entries.map((e) => [e.action, e.actor.type, e.target])).toEqual([
      ['webhook.created', 'user', { type: 'webhook', id }],
      ['webhook.updated', 'user', { type: 'webhook', id }],
      ['webhook.secret.rotated', 'user', { type: 'webhook', id }],
      ['webhook.disabled', 'system', { type: 'webhook', id }],
      ['webhook.url.refused', 'system', { type: 'webhook', id }],
      ['webhook.messages.replayed', 'user', { type: 'webhook', id }],
    ]);
    expect(entries.map((e) => e.changes)).toEqual([
      [
        { field: 'url', after: state.url },
        { field: 'description', after: 'CRM' },
        { field: 'eventTypes', after: ['user.created', 'user.deleted'] },
        { field: 'enabled', after: true },
        { field: 'ed25519', after: false },
      ],
      [{ field: 'description', before: 'CRM', after: 'CRM (EU)' }],
      [{ field: 'secret', redacted: true }, { field: 'previousSecretExpiresAt', after: until.toISOString() }],
      [{ field: 'enabled', before: true, after: false }, { field: 'reason', after: 'gone' }],
      [
        { field: 'url', after: state.url },
        { field: 'stage', after: 'connect' },
        { field: 'reason', after: 'loopback' },
        { field: 'address', after: '127.0.0.1' },
      ],
      [
        { field: 'since', after: '2026-01-01T00:00:00.000Z' },
        { field: 'until', after: until.toISOString() },
        { field: 'count', after: 3 },
      ],
    ]);
  });

  it('reading the trail needs audit.read now: a demoted reader, a non-holder and a call naming nobody are FORBIDDEN; no directory, UNAVAILABLE', async () => {
    const [reader, demoted] = [randomUUID(), randomUUID()];
    const access = new TestAccess().grant(reader, AUDIT_READ).grant(demoted, AUDIT_READ);
    const q = forReaders(queries(), access);
    await expect(q.list(demoted, { pageSize: 1 })).resolves.toMatchObject({ items: [expect.anything()] });
    access.revoke(demoted, AUDIT_READ);
    for (const actor of [demoted, randomUUID(), undefined]) {
      await expect(q.list(actor, { pageSize: 1 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(q.verify(actor)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
    await expect(q.verify(reader)).resolves.toMatchObject({ ok: true });
    access.down = true;
    await expect(q.list(reader, { pageSize: 1 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('(all of the above) no recorded field change lacks its values, except a secret', async () => {
    const all = (await queries().list({ pageSize: 100 })).items.flatMap((e) => e.changes.map((c) => ({ action: e.action, ...c })));
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter((c) => !c.redacted && c.before === undefined && c.after === undefined)).toEqual([]);
  });
});
