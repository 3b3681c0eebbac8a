/**
 * Prometheus metrics. One Metrics object per service and one for the gateway, each its own
 * registry, also when they share a process (the all-in-one): the gateway's /metrics is public
 * and anonymous, so it must show only what the gateway itself does, never a service's series
 * (those move with work done for accounts that exist: a reset mail, an event, a directory call).
 * Services serve theirs on their internal ops port.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Metrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly grpcServerDuration: Histogram<'service' | 'grpc_service' | 'grpc_method' | 'grpc_code'>;
  readonly grpcClientDuration: Histogram<'grpc_service' | 'grpc_method' | 'grpc_code'>;
  readonly eventsPublished: Counter<'subject'>;
  readonly eventsConsumed: Counter<'consumer' | 'subject' | 'outcome'>;
  readonly outboxPending: Gauge<'service'>;
  readonly outboxOldestAge: Gauge<'service'>;
  /** 1 while the process's NATS connection answers, else 0 (absent with the in-process bus). */
  readonly natsConnected: Gauge;
  /** Deferred work (not an event) that can never succeed, moved to the dead-letter stream at its first permanent failure. */
  readonly workDeadLettered: Counter<'work'>;
  /** Gateway: rate-limit checks that could not reach the shared store and let the request through. */
  readonly rateLimitStoreErrors: Counter;
  /** Gateway: DPoP proofs refused (503) because the shared store could not record their id (fail closed). */
  readonly dpopReplayStoreErrors: Counter;
  /** Events each durable consumer of the service has yet to finish (its lag), measured every few seconds. */
  readonly consumerBacklog: Gauge<'consumer'>;
  /** Gateway: single-resource reads answered by its read cache (`hit`) or by the directory (`miss`, `bypass` while it cannot be trusted). */
  readonly readCacheRequests: Counter<'kind' | 'outcome'>;
  /** Gateway: read-cache entries dropped, by why (`event`, `write`, `gap`, `ttl`). */
  readonly readCacheInvalidations: Counter<'reason'>;
}

/** Resolution of the event-loop lag of the process metrics (ms). */
export const EVENT_LOOP_MONITORING_MS = 100;

export function createMetrics(opts: { prefix?: string; defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  // The event-loop lag is sampled every 100 ms, not prom-client's 10 ms: 100 wake-ups a second
  // cost a process at rest about 7 ms of CPU per second (issue #43). Its lag series count the
  // sampling interval in (Node's histogram records whole intervals): about 0.1 s at rest now.
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
  const p = opts.prefix ?? '';
  return {
    registry,
    httpDuration: new Histogram({
      name: `${p}http_server_request_duration_seconds`,
      help: 'HTTP request latency by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    grpcServerDuration: new Histogram({
      name: `${p}grpc_server_handling_seconds`,
      help: 'gRPC server latency by service, method and status code.',
      labelNames: ['service', 'grpc_service', 'grpc_method', 'grpc_code'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    grpcClientDuration: new Histogram({
      name: `${p}grpc_client_handling_seconds`,
      help: 'gRPC client latency by service, method and status code.',
      labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    eventsPublished: new Counter({
      name: `${p}events_published_total`,
      help: 'Events handed to the event bus by the outbox relay.',
      labelNames: ['subject'],
      registers: [registry],
    }),
    eventsConsumed: new Counter({
      name: `${p}events_consumed_total`,
      help: 'Event deliveries handled by durable consumers, by outcome (ack, retry, dead_letter).',
      labelNames: ['consumer', 'subject', 'outcome'],
      registers: [registry],
    }),
    outboxPending: new Gauge({
      name: `${p}outbox_pending_events`,
      help: 'Events written to the outbox and not yet published.',
      labelNames: ['service'],
      registers: [registry],
    }),
    outboxOldestAge: new Gauge({
      name: `${p}outbox_oldest_pending_age_seconds`,
      help: 'Age of the oldest event in the outbox not yet published (0 when none is pending): grows while NATS is unreachable.',
      labelNames: ['service'],
      registers: [registry],
    }),
    natsConnected: new Gauge({
      name: `${p}nats_connected`,
      help: '1 while the NATS connection answers, 0 while it does not (readiness does not depend on it).',
      registers: [registry],
    }),
    workDeadLettered: new Counter({
      name: `${p}work_dead_lettered_total`,
      help: 'Deferred work (e.g. an accepted email-action request) dead-lettered at its first permanent failure instead of retried, by kind.',
      labelNames: ['work'],
      registers: [registry],
    }),
    consumerBacklog: new Gauge({
      name: `${p}events_consumer_backlog`,
      help: "Events a durable consumer has yet to finish (not yet delivered, or delivered and not acknowledged): its lag, the stream's own count, measured every 5 s.",
      labelNames: ['consumer'],
      registers: [registry],
    }),
    rateLimitStoreErrors: new Counter({
      name: `${p}rate_limit_store_errors_total`,
      help: 'Rate-limit checks that could not reach the shared store (Redis) and let the request through (fail open).',
      registers: [registry],
    }),
    dpopReplayStoreErrors: new Counter({
      name: `${p}dpop_replay_store_errors_total`,
      help: 'DPoP proofs refused (503) because the shared store (Redis) could not record their id (fail closed: a replay could not be told apart).',
      registers: [registry],
    }),
    readCacheRequests: new Counter({
      name: `${p}gateway_read_cache_requests_total`,
      help: 'Single-resource reads by the gateway read cache outcome (hit, miss, joined: a miss that joined a load on its way, bypass) and resource kind.',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    readCacheInvalidations: new Counter({
      name: `${p}gateway_read_cache_invalidations_total`,
      help: 'Gateway read-cache invalidations by reason (event, write, gap).',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}
