/**
 * Load shedding: while the event loop's mean delay over the last second is above
 * MAX_EVENT_LOOP_DELAY_MS, every request is answered at once by `onPressure` (503 + Retry-After)
 * instead of queueing behind the stall. The same rule @fastify/under-pressure applied, without its
 * fixed 10 ms sampling: its delay monitor woke the process 100 times a second whatever the
 * threshold, about 7 ms of CPU per second at rest (issue #43, idle CPU). Here the monitor's
 * resolution follows the threshold (a quarter of it, 5 to 250 ms), so a stall long enough to
 * matter is still seen.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';

/** How often the mean delay is taken (ms), as under-pressure did. */
export const SHEDDING_SAMPLE_MS = 1_000;

/** The delay monitor's resolution (ms) for a threshold. */
export function sheddingResolutionMs(maxEventLoopDelayMs: number): number {
  return Math.min(250, Math.max(5, Math.floor(maxEventLoopDelayMs / 4)));
}

export function loadShedding(app: FastifyInstance, opts: { readonly maxEventLoopDelayMs: number; readonly onPressure: () => never }): void {
  const resolution = sheddingResolutionMs(opts.maxEventLoopDelayMs);
  const histogram = monitorEventLoopDelay({ resolution });
  histogram.enable();
  let delay = 0;
  const timer = setInterval(() => {
    // The histogram records whole intervals between its timer's runs: their excess is the delay.
    // No run at all for a second (NaN) is a loop stalled for all of it.
    delay = Number.isNaN(histogram.mean) ? Infinity : Math.max(0, histogram.mean / 1e6 - resolution);
    histogram.reset();
  }, SHEDDING_SAMPLE_MS);
  timer.unref();
  app.addHook('onRequest', async () => {
    if (delay > opts.maxEventLoopDelayMs) opts.onPressure();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    histogram.disable();
  });
}
