/**
 * The webhook fan-out: the durable consumers' handler. Each event the catalog publishes becomes
 * one message per endpoint subscribed to its type, written before the event is acknowledged
 * (at least once: a redelivered event finds its messages and adds none; nothing is acknowledged
 * that is not written, so no event is lost). Events are written in groups, in the order they
 * arrive (the stream's): the first starts a write at once; those arriving meanwhile go together
 * in the next, one statement each group.
 */
import { webhookBody, webhookEventOf } from '@iam/contracts';
import { type EventHandler, type IncomingEvent, PermanentEventError } from '@iam/platform';
import type { QueuedEvent } from '../../domain/webhooks';

/** Events written in one statement at most. */
export const FAN_OUT_BATCH_MAX = 500;

export interface FanOutDeps {
  /** Writes the group (one statement); returns how many messages it queued. */
  readonly write: (events: readonly QueuedEvent[]) => Promise<number>;
  /** Called after a group with messages was written (the dispatcher's nudge). */
  readonly queued?: (n: number) => void;
}

/** The message body an event makes, or null when the catalog publishes nothing for it. */
export function toQueued(e: IncomingEvent): QueuedEvent | null {
  let published;
  try {
    published = webhookEventOf(e.subject, e.data);
  } catch (err) {
    throw new PermanentEventError(`the ${e.subject} event cannot be decoded for webhooks`, { cause: err });
  }
  if (!published) return null;
  return { eventId: e.id, type: published.type, occurredAt: e.occurredAt, payload: webhookBody(published.type, e.occurredAt, published.data) };
}

export function createFanOut(deps: FanOutDeps): EventHandler {
  const queue: Array<{ event: QueuedEvent; done: (err?: Error) => void }> = [];
  let draining = false;

  const drain = async (): Promise<void> => {
    draining = true;
    try {
      while (queue.length > 0) {
        const group = queue.splice(0, FAN_OUT_BATCH_MAX);
        try {
          const n = await deps.write(group.map((g) => g.event));
          for (const g of group) g.done();
          if (n > 0) deps.queued?.(n);
        } catch (err) {
          const e = err instanceof Error ? err : new Error('the webhook fan-out write failed', { cause: err });
          for (const g of group) g.done(e);
        }
      }
    } finally {
      draining = false;
    }
  };

  return async (e) => {
    const queued = toQueued(e);
    if (!queued) return;
    await new Promise<void>((resolve, reject) => {
      queue.push({ event: queued, done: (err) => (err ? reject(err) : resolve()) });
      if (!draining) void drain();
    });
  };
}
