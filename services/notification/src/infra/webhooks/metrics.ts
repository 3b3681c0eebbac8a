import type { Metrics } from '@iam/platform';
import { Counter, Gauge, Histogram } from 'prom-client';

/** The webhook dispatcher's metrics (issue #38, "Operations"). */
export interface WebhookMetrics {
  /** Attempts by outcome: delivered, failed, timeout, network, refused, redirect, gone. */
  readonly attempts: Counter<'outcome'>;
  /** Duration of one attempt (request to the end of the answer). */
  readonly latency: Histogram<'outcome'>;
  /** From the event (its commit) to its first attempt. */
  readonly firstAttempt: Histogram;
  /** Messages queued by the fan-out. */
  readonly queued: Counter;
  /** Messages that became dead letters. */
  readonly deadLettered: Counter;
  /** Endpoints the platform disabled, by reason. */
  readonly disabled: Counter<'reason'>;
  /** How late the oldest message that could be sent now is (s): the dispatcher's lag. */
  readonly queueAge: Gauge;
  readonly pending: Gauge;
  readonly deadLetters: Gauge;
  /**
   * Has `measure` set the three gauges above when /metrics is scraped (once per scrape, its
   * failure keeping the last values), rather than on a timer: a process at rest queries nothing
   * (issue #43, idle CPU). Returns the undo.
   */
  measureOnScrape(measure: () => Promise<void>): () => void;
}

/** The gauges' measure of each registry (the dispatcher's), and the scrape's measuring now. */
const measures = new WeakMap<object, () => Promise<void>>();
const running = new WeakMap<object, Promise<void>>();

function measureFor(registry: object): () => Promise<void> {
  return () => {
    const measure = measures.get(registry);
    if (!measure) return Promise.resolve();
    let p = running.get(registry);
    if (!p) {
      p = measure()
        .catch(() => undefined)
        .finally(() => running.delete(registry));
      running.set(registry, p);
    }
    return p;
  };
}

export function webhookMetrics(m: Metrics): WebhookMetrics {
  const registers = [m.registry];
  const collect = measureFor(m.registry);
  const get = <T>(name: string, make: () => T): T => (m.registry.getSingleMetric(name) as T | undefined) ?? make();
  return {
    attempts: get('webhook_attempts_total', () => new Counter({ name: 'webhook_attempts_total', help: 'Webhook attempts, by outcome.', labelNames: ['outcome'], registers })),
    latency: get(
      'webhook_attempt_duration_seconds',
      () =>
        new Histogram({
          name: 'webhook_attempt_duration_seconds',
          help: 'Duration of one webhook attempt, by outcome.',
          labelNames: ['outcome'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
          registers,
        }),
    ),
    firstAttempt: get(
      'webhook_first_attempt_seconds',
      () =>
        new Histogram({
          name: 'webhook_first_attempt_seconds',
          help: 'From the event to its first webhook attempt.',
          buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
          registers,
        }),
    ),
    queued: get('webhook_messages_queued_total', () => new Counter({ name: 'webhook_messages_queued_total', help: 'Webhook messages queued (one per event and endpoint).', registers })),
    deadLettered: get('webhook_dead_lettered_total', () => new Counter({ name: 'webhook_dead_lettered_total', help: 'Webhook messages whose schedule ran out (dead letters).', registers })),
    disabled: get('webhook_endpoints_disabled_total', () => new Counter({ name: 'webhook_endpoints_disabled_total', help: 'Endpoints disabled by the platform, by reason.', labelNames: ['reason'], registers })),
    queueAge: get('webhook_queue_age_seconds', () => new Gauge({ name: 'webhook_queue_age_seconds', help: 'How late the oldest webhook message that could be sent now is (the dispatcher lag).', registers, collect })),
    pending: get('webhook_messages_pending', () => new Gauge({ name: 'webhook_messages_pending', help: 'Webhook messages waiting for delivery (retries included).', registers, collect })),
    deadLetters: get('webhook_dead_letters', () => new Gauge({ name: 'webhook_dead_letters', help: 'Webhook dead letters kept (replayable).', registers, collect })),
    measureOnScrape(measure) {
      measures.set(m.registry, measure);
      return () => {
        if (measures.get(m.registry) === measure) measures.delete(m.registry);
      };
    },
  };
}
