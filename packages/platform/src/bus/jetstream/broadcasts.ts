/**
 * Broadcasts: core-NATS subscriptions, no stream. Whatever is published while a subscriber is
 * away is lost, so a subscriber can ask to be told (`onLive`) when that may have happened.
 */
import type { Logger } from '../../logger';
import { type BroadcastOptions, type EventHandler, handleInTrace, type Subscription } from '../port';
import type { JetStreamConnection } from './connection';
import { incomingBroadcast } from './messages';
import type { JetStreamNames } from './names';

export function subscribeBroadcast(
  deps: { readonly link: JetStreamConnection; readonly names: JetStreamNames; readonly logger: Logger },
  subjects: readonly string[],
  handler: EventHandler,
  opts?: BroadcastOptions,
): Subscription {
  const { link, names, logger } = deps;
  let stopped = false;
  const active: Array<{ unsubscribe(): void }> = [];
  let stopLive: (() => void) | undefined;
  void (async () => {
    const conn = await link.get();
    if (stopped) return;
    for (const s of subjects) {
      active.push(
        conn.nc.subscribe(names.subject(s), {
          callback: (err, msg) => {
            if (err) return;
            const event = incomingBroadcast(names, msg);
            handleInTrace(handler, event, { system: 'nats' }).catch((e: unknown) => logger.warn({ err: e, subject: event.subject }, 'broadcast handler failed'));
          },
        }),
      );
    }
    if (opts?.onLive) {
      // Live once the server has the subscriptions (a round trip), and again after every reconnect.
      await conn.nc.flush();
      if (stopped) return;
      stopLive = link.onLive(opts.onLive);
    }
  })().catch(() => undefined);
  return {
    stop: async () => {
      stopped = true;
      stopLive?.();
      for (const a of active) a.unsubscribe();
    },
  };
}
