/**
 * How a webhook attempt's answer is judged and when the next one goes (Standard Webhooks 1.0,
 * "Deliverability and reliability"): 2xx delivers; 410 Gone disables the endpoint; 3xx fails and
 * is never followed; anything else fails and is retried on the schedule, with jitter, no sooner
 * than a `Retry-After` asks (capped). After the schedule's last attempt the message is a dead
 * letter.
 *
 * A failure is the endpoint's (it cannot take anything now: no answer, a timeout, 3xx, 401, 403,
 * 404, 408, 429, 5xx, ...) or the message's (the receiver is up and refused this content: 400,
 * 409, 413, 415, 422). An endpoint's failure holds its whole line until the retry (ordering, and
 * the spec's throttling on 429/502/504); a message's failure takes only that message out of the
 * line, so one bad message does not hold the endpoint's others for days.
 */

/** The spec's example schedule: delays (s) before attempts 1..10, about 3 days in all. */
export const STANDARD_SCHEDULE_S: readonly number[] = [0, 5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400];

/** The longest a `Retry-After` may put an attempt off (s). */
export const MAX_RETRY_AFTER_S = 24 * 3600;

/** Statuses that say "this message", not "this endpoint". */
const MESSAGE_STATUSES = new Set([400, 409, 413, 415, 422]);

export type Outcome = 'delivered' | 'failed' | 'timeout' | 'network' | 'refused' | 'redirect' | 'gone';

export interface Verdict {
  readonly outcome: Outcome;
  /** The whole endpoint holds back (true) or only this message steps out of line (false). */
  readonly endpointFailure: boolean;
}

/** The verdict on an HTTP answer (status). */
export function judgeStatus(status: number): Verdict {
  if (status >= 200 && status < 300) return { outcome: 'delivered', endpointFailure: false };
  if (status === 410) return { outcome: 'gone', endpointFailure: true };
  if (status >= 300 && status < 400) return { outcome: 'redirect', endpointFailure: true };
  return { outcome: 'failed', endpointFailure: !MESSAGE_STATUSES.has(status) };
}

/** ± this share of a delay, at random (the spec's jitter): 10 %. */
export const JITTER = 0.1;

/**
 * The delay (ms) before attempt `next` (1-based) of a schedule, jittered, or undefined when the
 * schedule has no such attempt (a dead letter). `retryAfterS` (the answer's Retry-After) is a
 * floor, capped at MAX_RETRY_AFTER_S.
 */
export function delayBefore(scheduleS: readonly number[], next: number, opts: { retryAfterS?: number; random?: () => number } = {}): number | undefined {
  if (next < 1 || next > scheduleS.length) return undefined;
  const base = scheduleS[next - 1]! * 1000;
  const r = (opts.random ?? Math.random)();
  const jittered = base * (1 - JITTER + 2 * JITTER * r);
  const floor = opts.retryAfterS !== undefined ? Math.min(opts.retryAfterS, MAX_RETRY_AFTER_S) * 1000 : 0;
  return Math.round(Math.max(jittered, floor));
}

/** Seconds a Retry-After header asks for (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | undefined, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** Parses WEBHOOK_RETRY_SCHEDULE: seconds, comma-separated, each ≥ 0, 1..50 of them. */
export function parseSchedule(text: string): number[] | string {
  const parts = text.split(',').map((s) => s.trim());
  if (parts.length < 1 || parts.length > 50) return 'must list 1 to 50 delays';
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d+(\.\d+)?$/.test(p)) return `"${p}" is not a number of seconds`;
    const n = Number(p);
    if (n > 30 * 86_400) return `${p} s is more than 30 days`;
    out.push(n);
  }
  return out;
}
