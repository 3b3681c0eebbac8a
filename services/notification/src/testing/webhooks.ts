/**
 * A webhook world for tests, on the real PostgreSQL: the notification schema migrated, the endpoint
 * use cases, the fan-out handler and dispatchers (as many as a test starts), built as the service
 * builds them, with a short retry schedule and loopback allowed unless the test says otherwise.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type EventPayload, type EventSubject, SUBJECTS, encodeEvent, eventsV1 } from '@iam/contracts';
import { type EventHandler, type IncomingEvent, outboxUnitOfWork } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger, testMetrics } from '@iam/platform/testing';
import { type Dispatcher, createDispatcher } from '../app/webhooks/dispatcher';
import { type EndpointUseCases, type WebhookStores, endpointUseCases } from '../app/webhooks/endpoints';
import { createFanOut } from '../app/webhooks/fan-out';
import { entities, migrations } from '../infra/schema';
import { pgDispatch } from '../infra/webhooks/dispatch-store';
import { pgEndpoints } from '../infra/webhooks/endpoints-store';
import type { Resolver } from '../infra/webhooks/guard';
import { createWebhookHttp } from '../infra/webhooks/http';
import { pgMessages } from '../infra/webhooks/messages-store';
import { type WebhookMetrics, webhookMetrics } from '../infra/webhooks/metrics';
import { deriveWebhookKey } from '../infra/webhooks/secrets';

export interface WorldOptions {
  readonly schedule?: readonly number[];
  readonly allowPrivate?: boolean;
  readonly platformHosts?: readonly string[];
  readonly resolve?: Resolver;
  readonly graceMs?: number;
  readonly disableAfterMs?: number;
  readonly leaseMs?: number;
  readonly timeoutMs?: number;
  readonly concurrency?: number;
}

export interface WebhookWorld {
  readonly db: MigratedDatabase;
  readonly uc: EndpointUseCases;
  readonly fanOut: EventHandler;
  readonly metrics: WebhookMetrics;
  /** Starts a dispatcher (stopped by `stopDispatchers` or `close`). */
  dispatcher(extra?: Partial<WorldOptions>): Dispatcher;
  stopDispatchers(): Promise<void>;
  /** Subjects of the events the notification outbox holds, oldest first. */
  outbox(): Promise<Array<{ subject: string; payload: Buffer }>>;
  close(): Promise<void>;
}

/** An incoming event as a consumer receives it. */
export function incoming<S extends EventSubject>(subject: S, payload: EventPayload<S>, id = randomUUID()): IncomingEvent {
  return { id, subject, data: encodeEvent(subject, payload), occurredAt: new Date(), deliveryCount: 1 };
}

/** A `directory.user.created` event for user number `i`. */
export function userCreated(i: number, id = randomUUID()): IncomingEvent {
  return incoming(SUBJECTS.userCreated, eventsV1.UserChanged.create({ userId: randomUUID(), email: `user${i}@example.com`, firstName: `User${i}`, lastName: 'Test', roles: [], emailVerified: false }), id);
}

export async function webhookWorld(name: string, o: WorldOptions = {}): Promise<WebhookWorld> {
  const db = await migratedTestDatabase(name, { entities, migrations });
  const key = deriveWebhookKey(randomBytes(32));
  const metrics = webhookMetrics(testMetrics());
  const guard = { allowPrivate: o.allowPrivate ?? true, platformHosts: o.platformHosts ?? [], resolve: o.resolve };
  const read: WebhookStores = { endpoints: pgEndpoints(db.ds), messages: pgMessages(db.ds) };
  const dispatchers: Dispatcher[] = [];
  const https: Array<{ close(): Promise<void> }> = [];
  const nudge = () => dispatchers.forEach((d) => d.nudge());
  const uc = endpointUseCases({
    uow: outboxUnitOfWork(db.ds, (m) => ({ endpoints: pgEndpoints(m), messages: pgMessages(m) })),
    read,
    key,
    guard,
    graceMs: o.graceMs ?? 24 * 3_600_000,
    queued: nudge,
  });
  return {
    db,
    uc,
    metrics,
    fanOut: createFanOut({ write: (events) => read.messages.fanOut(events), queued: nudge }),
    dispatcher(extra = {}) {
      const x = { ...o, ...extra };
      const http = createWebhookHttp({ ...guard, ...(x.resolve ? { resolve: x.resolve } : {}), allowPrivate: x.allowPrivate ?? true, timeoutMs: x.timeoutMs ?? 5_000 });
      https.push(http);
      const d = createDispatcher({
        store: pgDispatch(db.ds),
        http,
        key,
        schedule: x.schedule ?? [0, 0.2, 0.4],
        concurrency: x.concurrency ?? 8,
        leaseMs: x.leaseMs ?? 10_000,
        pollMs: 50,
        disableAfterMs: x.disableAfterMs ?? 3_600_000,
        metrics,
        logger: testLogger(),
      });
      d.start();
      dispatchers.push(d);
      return d;
    },
    async stopDispatchers() {
      await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
    },
    outbox: () => db.ds.query('SELECT subject, payload FROM outbox_events ORDER BY occurred_at, id'),
    async close() {
      await Promise.all(dispatchers.map((d) => d.stop()));
      await Promise.all(https.map((h) => h.close()));
      await db.close();
    },
  };
}
