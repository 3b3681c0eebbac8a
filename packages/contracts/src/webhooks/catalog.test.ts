/**
 * The webhook event catalog (issue #38): one entry per public type, each example valid against its
 * JSON Schema, every internal event it maps turned into `data` its schema accepts, no secret field
 * anywhere, and the README's generated section current.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import * as eventsV1 from '../events';
import { type EventSubject, SUBJECTS, encodeEvent } from '../events';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SOURCE_SUBJECTS, webhookBody, webhookEventOf } from './catalog';
import { catalogMarkdown, withCatalog } from './docs';

const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const user = { userId: U(1), email: 'ann@example.com', firstName: 'Ann', lastName: 'Lee', roles: ['B', 'A'], emailVerified: true, phone: 5550100 };
const client = eventsV1.ClientState.create({ name: 'CRM', type: 'confidential', redirectUris: ['https://x.example/cb'], grantTypes: ['authorization_code'], roles: ['R'] });
const product = eventsV1.ProductState.create({ sku: 'S', name: 'N', description: 'D', priceMinor: 100, currency: 'EUR', status: 'ACTIVE', onHand: 3 });
const order = { orderId: U(7), customerId: U(1), customerEmail: '', lines: [{ productId: U(8), sku: 'S', name: 'N', quantity: 2, unitPriceMinor: 100 }], totalMinor: 200, currency: 'EUR', placedAt: new Date() };
const factor = { userId: U(1), factor: 'webauthn', failures: 0, reason: 'lost', recoveryCodesLeft: 10, credential: '9f86d081884c7d65', name: 'Key' };

/** A representative event of every subject the catalog publishes from. */
const SAMPLES: Partial<Record<EventSubject, Uint8Array>> = {
  [SUBJECTS.userCreated]: encodeEvent(SUBJECTS.userCreated, eventsV1.UserChanged.create(user)),
  [SUBJECTS.userUpdated]: encodeEvent(SUBJECTS.userUpdated, eventsV1.UserChanged.create({ ...user, changedFields: ['email', 'password'], before: { ...user, email: 'old@example.com' } })),
  [SUBJECTS.userDeleted]: encodeEvent(SUBJECTS.userDeleted, eventsV1.UserChanged.create(user)),
  [SUBJECTS.organizationCreated]: encodeEvent(SUBJECTS.organizationCreated, { organizationId: U(9), name: 'Acme', slug: 'acme', jitEnabled: false, jitRoles: [], changedFields: [], before: undefined }),
  [SUBJECTS.organizationUpdated]: encodeEvent(SUBJECTS.organizationUpdated, {
    organizationId: U(9),
    name: 'Acme Corp',
    slug: 'acme',
    jitEnabled: true,
    jitRoles: ['reader'],
    changedFields: ['name', 'jitEnabled', 'jitRoles'],
    before: { name: 'Acme', slug: 'acme', jitEnabled: false, jitRoles: [] },
  }),
  [SUBJECTS.organizationDeleted]: encodeEvent(SUBJECTS.organizationDeleted, { organizationId: U(9), name: 'Acme', slug: 'acme', jitEnabled: false, jitRoles: [], changedFields: [], before: undefined }),
  [SUBJECTS.organizationMembershipUpdated]: encodeEvent(SUBJECTS.organizationMembershipUpdated, {
    organizationId: U(9),
    organizationSlug: 'acme',
    userId: U(1),
    memberBefore: false,
    memberAfter: true,
    rolesBefore: [],
    roles: ['org.admin'],
    via: 'invitation',
  }),
  [SUBJECTS.roleCreated]: encodeEvent(SUBJECTS.roleCreated, { roleId: U(2), name: 'R', description: '', changedFields: [], before: undefined }),
  [SUBJECTS.roleUpdated]: encodeEvent(SUBJECTS.roleUpdated, { roleId: U(2), name: 'R2', description: 'd', changedFields: ['name'], before: { name: 'R', description: 'd' } }),
  [SUBJECTS.roleDeleted]: encodeEvent(SUBJECTS.roleDeleted, { roleId: U(2), name: 'R', description: '', changedFields: [], before: undefined }),
  [SUBJECTS.permissionCreated]: encodeEvent(SUBJECTS.permissionCreated, { permissionId: U(3), name: 'p', description: '', changedFields: [], before: undefined }),
  [SUBJECTS.permissionUpdated]: encodeEvent(SUBJECTS.permissionUpdated, { permissionId: U(3), name: 'p', description: 'x', changedFields: ['description'], before: { name: 'p', description: '' } }),
  [SUBJECTS.permissionDeleted]: encodeEvent(SUBJECTS.permissionDeleted, { permissionId: U(3), name: 'p', description: '', changedFields: [], before: undefined }),
  [SUBJECTS.rolePermissionCreated]: encodeEvent(SUBJECTS.rolePermissionCreated, { linkId: U(4), roleId: U(2), permissionId: U(3), roleName: 'R', permissionName: 'p', before: undefined }),
  [SUBJECTS.rolePermissionUpdated]: encodeEvent(SUBJECTS.rolePermissionUpdated, { linkId: U(4), roleId: U(2), permissionId: U(3), roleName: 'R', permissionName: 'p', before: { roleId: U(5), permissionId: U(3), roleName: 'Q', permissionName: 'p' } }),
  [SUBJECTS.rolePermissionDeleted]: encodeEvent(SUBJECTS.rolePermissionDeleted, { linkId: U(4), roleId: U(2), permissionId: U(3), roleName: 'R', permissionName: 'p', before: undefined }),
  [SUBJECTS.accountLocked]: encodeEvent(SUBJECTS.accountLocked, { userId: U(1), failures: 5, reason: '' }),
  [SUBJECTS.accountUnlocked]: encodeEvent(SUBJECTS.accountUnlocked, { userId: U(1) }),
  [SUBJECTS.loginSucceeded]: encodeEvent(SUBJECTS.loginSucceeded, { userId: U(1), failures: 0, reason: '' }),
  [SUBJECTS.sessionEnded]: encodeEvent(SUBJECTS.sessionEnded, { userId: U(1), sessionId: 's1', tokensRevoked: 2 }),
  [SUBJECTS.mfaEnrolled]: encodeEvent(SUBJECTS.mfaEnrolled, factor),
  [SUBJECTS.mfaRemoved]: encodeEvent(SUBJECTS.mfaRemoved, { ...factor, factor: 'totp', credential: '', name: '' }),
  [SUBJECTS.mfaReset]: encodeEvent(SUBJECTS.mfaReset, { ...factor, factor: '', credential: '', name: '' }),
  [SUBJECTS.clientCreated]: encodeEvent(SUBJECTS.clientCreated, { clientId: U(6), after: client, before: undefined, changedFields: [], grantsRevoked: false, grantsRevokedCount: 0 }),
  [SUBJECTS.clientUpdated]: encodeEvent(SUBJECTS.clientUpdated, { clientId: U(6), after: { ...client, name: 'CRM2' }, before: client, changedFields: ['name'], grantsRevoked: true, grantsRevokedCount: 3 }),
  [SUBJECTS.clientDeleted]: encodeEvent(SUBJECTS.clientDeleted, { clientId: U(6), after: client, before: undefined, changedFields: [], grantsRevoked: false, grantsRevokedCount: 0 }),
  [SUBJECTS.clientSecretRotated]: encodeEvent(SUBJECTS.clientSecretRotated, { clientId: U(6), after: client, before: undefined, changedFields: [], grantsRevoked: true, grantsRevokedCount: 1 }),
  [SUBJECTS.consentGranted]: encodeEvent(SUBJECTS.consentGranted, { userId: U(1), clientId: U(6), scopes: ['openid', 'email'] }),
  [SUBJECTS.federatedIdentityLinked]: encodeEvent(SUBJECTS.federatedIdentityLinked, { userId: U(1), providerId: U(6), providerName: 'google', issuer: 'https://accounts.google.com', subject: '1102', how: 'sign-up', actorId: U(1) }),
  [SUBJECTS.federatedIdentityUnlinked]: encodeEvent(SUBJECTS.federatedIdentityUnlinked, { userId: U(1), providerId: U(6), providerName: 'google', issuer: 'https://accounts.google.com', subject: '1102', how: 'account', actorId: U(1) }),
  [SUBJECTS.orderPlaced]: encodeEvent(SUBJECTS.orderPlaced, order),
  [SUBJECTS.orderCancelled]: encodeEvent(SUBJECTS.orderCancelled, { ...order, customerEmail: 'ann@example.com' }),
  [SUBJECTS.productCreated]: encodeEvent(SUBJECTS.productCreated, { productId: U(8), after: product, before: undefined, changedFields: [] }),
  [SUBJECTS.productUpdated]: encodeEvent(SUBJECTS.productUpdated, { productId: U(8), after: { ...product, name: 'M' }, before: product, changedFields: ['name'] }),
  [SUBJECTS.productArchived]: encodeEvent(SUBJECTS.productArchived, { productId: U(8), after: { ...product, status: 'ARCHIVED' }, before: product, changedFields: ['status'] }),
  [SUBJECTS.productReactivated]: encodeEvent(SUBJECTS.productReactivated, { productId: U(8), after: product, before: { ...product, status: 'ARCHIVED' }, changedFields: ['status'] }),
  [SUBJECTS.productStockAdjusted]: encodeEvent(SUBJECTS.productStockAdjusted, { productId: U(8), after: { ...product, onHand: 1 }, before: product, changedFields: ['onHand'] }),
};

const SECRETISH = /password|hash|token|secret|code$|otp/i;
/** Counts, not values. */
const COUNTS = new Set(['tokensRevoked']);
function propertyNames(schema: unknown, out: string[] = []): string[] {
  if (schema && typeof schema === 'object') {
    for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
      if (k === 'properties') out.push(...Object.keys(v as object));
      propertyNames(v, out);
    }
  }
  return out;
}

describe('the webhook event catalog', () => {
  it('names each type once, hierarchically (Standard Webhooks: [a-z0-9_] segments), with a version and a description', () => {
    const types = WEBHOOK_EVENT_TYPES.map((t) => t.type);
    expect(new Set(types).size).toBe(types.length);
    for (const t of WEBHOOK_EVENT_TYPES) {
      expect(t.type).toMatch(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/);
      expect(t.version).toBeGreaterThanOrEqual(1);
      expect(t.description.length).toBeGreaterThan(10);
    }
    expect(types).toEqual(expect.arrayContaining(['user.created', 'user.updated', 'user.deleted', 'user.locked', 'role.created', 'permission.updated', 'session.started', 'session.ended', 'mfa.enrolled', 'mfa.removed', 'client.created', 'order.placed', 'webhook.test']));
    // One public type per internal event (its webhook-id is the event's).
    expect(new Set(WEBHOOK_SOURCE_SUBJECTS).size).toBe(WEBHOOK_SOURCE_SUBJECTS.length);
  });

  it("every example is valid against its type's schema", () => {
    for (const t of WEBHOOK_EVENT_TYPES) {
      const valid = ajv.validate(t.schema, t.example);
      expect([t.type, valid ? [] : ajv.errors]).toEqual([t.type, []]);
    }
  });

  it('every internal event it publishes from becomes data its schema accepts; nothing else is published', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...WEBHOOK_SOURCE_SUBJECTS].sort());
    for (const [subject, payload] of Object.entries(SAMPLES)) {
      const out = webhookEventOf(subject, payload);
      const t = WEBHOOK_EVENT_TYPES.find((x) => x.subject === subject)!;
      expect(out?.type).toBe(t.type);
      const valid = ajv.validate(t.schema, out!.data);
      expect([subject, valid ? [] : ajv.errors]).toEqual([subject, []]);
    }
    for (const subject of [SUBJECTS.passwordResetRequested, SUBJECTS.emailVerificationRequested, SUBJECTS.tokenRevoked, SUBJECTS.loginFailed, SUBJECTS.webhookCreated]) {
      expect(webhookEventOf(subject, new Uint8Array())).toBeNull();
    }
  });

  it('never carries a secret: no schema names a password, hash, token, secret or code; a password change is only redacted', () => {
    for (const t of WEBHOOK_EVENT_TYPES) expect([t.type, propertyNames(t.schema).filter((n) => SECRETISH.test(n) && !COUNTS.has(n))]).toEqual([t.type, []]);
    const updated = webhookEventOf(SUBJECTS.userUpdated, SAMPLES[SUBJECTS.userUpdated]!)!;
    expect(updated.data.changes).toEqual([
      { field: 'email', before: 'old@example.com', after: 'ann@example.com' },
      { field: 'password', redacted: true },
    ]);
    const body = webhookBody(updated.type, new Date('2026-01-01T00:00:00Z'), updated.data);
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['type', 'timestamp', 'data']);
  });

  it("the README's event table is generated from the catalog and current (make webhooks-docs)", () => {
    const readme = readFileSync(join(__dirname, '..', '..', '..', '..', 'README.md'), 'utf8');
    expect(withCatalog(readme)).toBe(readme);
    for (const t of WEBHOOK_EVENT_TYPES) expect(catalogMarkdown()).toContain(`\`${t.type}\``);
  });
});
