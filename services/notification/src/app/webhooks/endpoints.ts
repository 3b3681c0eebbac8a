/**
 * The webhook endpoints' use cases: register (the secret answered once), change, delete (soft),
 * rotate the secret (the old one signs on for the grace window), send a test, list messages and
 * attempts, replay. Every change is one transaction with its event in the outbox (the audit trail
 * records it); no event carries a secret. A URL the SSRF guard refuses is refused here too, and
 * the refusal is recorded on its own (the request fails, the record stays).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS, WEBHOOK_TEST_TYPE, WEBHOOK_TYPE_NAMES, webhookBody } from '@iam/contracts';
import { AppError, type NewEvent, type UnitOfWork, event } from '@iam/platform';
import type { EndpointSettings, MessageStatus, Page, WebhookAttempt, WebhookEndpoint, WebhookMessage } from '../../domain/webhooks';
import { eventIdOf, webhookId } from '../../domain/webhooks';
import { type EndpointRecord, type EndpointStore, publicView } from '../../infra/webhooks/endpoints-store';
import { AddressRefusedError, type GuardOptions, checkUrl } from '../../infra/webhooks/guard';
import type { MessageStore } from '../../infra/webhooks/messages-store';
import { newSecret, newSigningKey, sealFor } from '../../infra/webhooks/secrets';

export interface WebhookStores {
  readonly endpoints: EndpointStore;
  readonly messages: MessageStore;
}

export interface EndpointUseCaseDeps {
  readonly uow: UnitOfWork<WebhookStores>;
  /** Reads outside a transaction. */
  readonly read: WebhookStores;
  readonly key: Buffer;
  readonly guard: GuardOptions;
  /** How long a rotated-out secret still signs (ms). */
  readonly graceMs: number;
  /** Messages were queued (the dispatcher's nudge). */
  readonly queued?: () => void;
}

export interface EndpointInput {
  readonly url: string;
  readonly description: string;
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
}

const MAX_TYPES = 100;

function validUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw AppError.validation('The URL is not an absolute URL.', [{ field: 'url', message: 'must be an absolute http(s) URL' }]);
  }
  const bad = (message: string) => AppError.validation(`The URL ${message}.`, [{ field: 'url', message }]);
  if (raw.length > 2_000) throw bad('must be at most 2000 characters');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('must use https');
  if (url.username || url.password) throw bad('must not carry credentials (the signature authenticates deliveries)');
  if (url.hash) throw bad('must not have a fragment');
  return url.toString();
}

function validTypes(types: readonly string[]): string[] {
  const unique = [...new Set(types)];
  if (unique.length > MAX_TYPES) throw AppError.validation(`At most ${MAX_TYPES} event types.`, [{ field: 'eventTypes', message: `at most ${MAX_TYPES}` }]);
  const unknown = unique.filter((t) => !WEBHOOK_TYPE_NAMES.has(t) || t === WEBHOOK_TEST_TYPE);
  if (unknown.length > 0) throw AppError.validation(`Unknown event types: ${unknown.join(', ')}.`, [{ field: 'eventTypes', message: `unknown: ${unknown.join(', ')}` }]);
  return unique.sort();
}

const state = (s: EndpointSettings) => ({ url: s.url, description: s.description, eventTypes: [...s.eventTypes], enabled: s.enabled, ed25519: s.ed25519 });
const CHANGEABLE = ['url', 'description', 'eventTypes', 'enabled'] as const;

export function endpointUseCases(d: EndpointUseCaseDeps) {
  /** The SSRF check; a refusal is recorded (its own transaction) and answered as a 400 on `url`. */
  async function guard(url: string, endpointId: string, stage: 'create' | 'update'): Promise<void> {
    try {
      await checkUrl(url, d.guard);
    } catch (err) {
      if (!(err instanceof AddressRefusedError)) throw err;
      await d.uow.run((tx) => tx.publish([event(SUBJECTS.webhookUrlRefused, { endpointId, url, stage, reason: err.reason, address: err.address })]));
      throw new AppError('VALIDATION', `The URL is refused: ${err.reason === 'scheme' ? 'it must use https' : `its host is ${err.reason.replace('_', ' ')}`}.`, {
        reason: 'notification.webhook_url_refused',
        errors: [{ field: 'url', message: `refused (${err.reason})` }],
      });
    }
  }

  async function mustGet(id: string, tx?: WebhookStores): Promise<EndpointRecord> {
    const e = await (tx ?? d.read).endpoints.get(id, { lock: Boolean(tx) });
    if (!e) throw AppError.notFound('No such webhook endpoint.');
    return e;
  }

  return {
    async create(input: EndpointInput & { ed25519: boolean }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      const settings: EndpointSettings = { url: validUrl(input.url), description: input.description, eventTypes: validTypes(input.eventTypes), enabled: input.enabled, ed25519: input.ed25519 };
      await guard(settings.url, '', 'create');
      const id = randomUUID();
      const secret = newSecret();
      const pair = settings.ed25519 ? newSigningKey() : undefined;
      const endpoint = await d.uow.run(async (tx) => {
        await tx.endpoints.insert({
          id,
          settings,
          secret: sealFor(d.key, id, 'secret', secret),
          signingKey: pair ? sealFor(d.key, id, 'signing-key', pair.privateDer) : null,
          publicKey: pair?.publicKey ?? '',
        });
        await tx.publish([event(SUBJECTS.webhookCreated, { endpointId: id, after: state(settings), before: undefined, changedFields: [], reason: '', previousSecretExpiresAt: undefined })]);
        return publicView((await tx.endpoints.get(id))!);
      });
      return { endpoint, secret };
    },

    async update(id: string, patch: Partial<EndpointInput>): Promise<WebhookEndpoint> {
      const current = await mustGet(id);
      const next: EndpointSettings = {
        url: patch.url !== undefined ? validUrl(patch.url) : current.url,
        description: patch.description ?? current.description,
        eventTypes: patch.eventTypes !== undefined ? validTypes(patch.eventTypes) : current.eventTypes,
        enabled: patch.enabled ?? current.enabled,
        ed25519: current.ed25519,
      };
      if (next.url !== current.url) await guard(next.url, id, 'update');
      return d.uow.run(async (tx) => {
        const before = await mustGet(id, tx);
        const changed = CHANGEABLE.filter((f) => JSON.stringify(next[f]) !== JSON.stringify(before[f]));
        if (changed.length === 0) return publicView(before);
        await tx.endpoints.update(id, next);
        await tx.publish([event(SUBJECTS.webhookUpdated, { endpointId: id, after: state(next), before: state(before), changedFields: [...changed], reason: '', previousSecretExpiresAt: undefined })]);
        return publicView((await tx.endpoints.get(id))!);
      });
    },

    async remove(id: string): Promise<void> {
      await d.uow.run(async (tx) => {
        const e = await mustGet(id, tx);
        await tx.endpoints.softDelete(id);
        await tx.publish([event(SUBJECTS.webhookDeleted, { endpointId: id, after: state(e), before: undefined, changedFields: [], reason: '', previousSecretExpiresAt: undefined })]);
      });
    },

    async rotate(id: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      const secret = newSecret();
      const endpoint = await d.uow.run(async (tx) => {
        const e = await mustGet(id, tx);
        const pair = e.ed25519 ? newSigningKey() : undefined;
        const previousExpiresAt = new Date(Date.now() + d.graceMs);
        await tx.endpoints.rotate(id, {
          secret: sealFor(d.key, id, 'secret', secret),
          previousSecret: e.secret,
          signingKey: pair ? sealFor(d.key, id, 'signing-key', pair.privateDer) : null,
          previousSigningKey: e.signingKey,
          publicKey: pair?.publicKey ?? '',
          previousExpiresAt,
        });
        await tx.publish([event(SUBJECTS.webhookSecretRotated, { endpointId: id, after: state(e), before: undefined, changedFields: [], reason: '', previousSecretExpiresAt: previousExpiresAt })]);
        return publicView((await tx.endpoints.get(id))!);
      });
      return { endpoint, secret };
    },

    async sendTest(id: string): Promise<string> {
      const eventId = randomUUID();
      await d.uow.run(async (tx) => {
        await mustGet(id, tx);
        const now = new Date();
        const payload = webhookBody(WEBHOOK_TEST_TYPE, now, { endpointId: id, message: 'This is a test delivery from IAM.' });
        await tx.messages.enqueueAside(id, { eventId, type: WEBHOOK_TEST_TYPE, occurredAt: now, payload });
        await tx.publish([event(SUBJECTS.webhookTested, { endpointId: id, messageId: webhookId(eventId) })]);
      });
      d.queued?.();
      return webhookId(eventId);
    },

    get: async (id: string, includeDeleted = false): Promise<WebhookEndpoint> => {
      const e = await d.read.endpoints.get(id, { includeDeleted });
      if (!e) throw AppError.notFound('No such webhook endpoint.');
      return publicView(e);
    },

    list: (q: { page: number; pageSize: number; q?: string; includeDeleted?: boolean }): Promise<Page<WebhookEndpoint>> => d.read.endpoints.list(q),

    async messages(id: string, q: { page: number; pageSize: number; status?: MessageStatus; since?: Date; until?: Date }): Promise<Page<WebhookMessage>> {
      await this.get(id, true);
      return d.read.messages.list(id, q);
    },

    async attempts(id: string, q: { page: number; pageSize: number; messageId?: string }): Promise<Page<WebhookAttempt>> {
      await this.get(id, true);
      const eventId = q.messageId ? eventIdOf(q.messageId) : undefined;
      if (q.messageId && !eventId) throw AppError.validation('Not a message id.', [{ field: 'messageId', message: 'must be msg_ and 32 hex digits' }]);
      return d.read.messages.attempts(id, { page: q.page, pageSize: q.pageSize, eventId });
    },

    async replayOne(id: string, messageId: string): Promise<WebhookMessage> {
      const eventId = eventIdOf(messageId);
      if (!eventId) throw AppError.notFound('No such message.');
      const m = await d.uow.run(async (tx) => {
        await mustGet(id, tx);
        const replayed = await tx.messages.replayOne(id, eventId);
        if (!replayed) throw AppError.notFound('No such message.');
        await tx.publish([event(SUBJECTS.webhookReplayed, { endpointId: id, messageId, since: undefined, until: undefined, count: 1 })]);
        return replayed;
      });
      d.queued?.();
      return m;
    },

    async replayFailed(id: string, since: Date, until: Date): Promise<number> {
      if (!(since < until)) throw AppError.validation('`since` must be before `until`.', [{ field: 'since', message: 'must be before until' }]);
      const n = await d.uow.run(async (tx) => {
        await mustGet(id, tx);
        const count = await tx.messages.replayDead(id, since, until);
        const events: NewEvent[] = count > 0 ? [event(SUBJECTS.webhookReplayed, { endpointId: id, messageId: '', since, until, count })] : [];
        await tx.publish(events);
        return count;
      });
      if (n > 0) d.queued?.();
      return n;
    },
  };
}

export type EndpointUseCases = ReturnType<typeof endpointUseCases>;
