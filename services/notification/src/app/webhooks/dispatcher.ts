/**
 * The webhook dispatcher: a BatchLoop that claims lanes (endpoints with a message to send now; see
 * infra/webhooks/dispatch-store.ts) up to its concurrency and works each lane on its own: the
 * endpoint's messages in queue order, one at a time, signed afresh for every attempt (a new
 * webhook-timestamp and signature, the same webhook-id and body), results recorded every batch.
 *
 * Order: a message waits while an older message of its endpoint's line is pending. A failure of
 * the endpoint (no answer, timeout, 3xx, 5xx, 429, ...) holds the whole line until the failed
 * message's next attempt (so an outage costs one request per retry, not one per message, and
 * order holds); the receiver refusing this message's content (400, 409, 413, 415, 422) takes it
 * out of the line onto its own schedule, and the line moves on. Test messages and replays are out
 * of line from the start. An endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS, or answering
 * 410 Gone, is disabled (an event says so; its queued messages wait for it to be enabled again).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { BatchLoop, type Logger, type NewEvent, event } from '@iam/platform';
import { type Verdict, delayBefore, judgeStatus, parseRetryAfter } from '../../domain/delivery-policy';
import { webhookId } from '../../domain/webhooks';
import type { AttemptRecord, DispatchStore, EndpointOutcome, LaneEndpoint, LaneMessage } from '../../infra/webhooks/dispatch-store';
import type { WebhookHttp } from '../../infra/webhooks/http';
import type { WebhookMetrics } from '../../infra/webhooks/metrics';
import { openFor, privateKeyOf } from '../../infra/webhooks/secrets';
import { type Signer, createSigner } from '../../infra/webhooks/signer';

export interface DispatcherOptions {
  readonly store: DispatchStore;
  readonly http: WebhookHttp;
  /** The key endpoint secrets are sealed with (derived from WEBHOOK_SECRET_KEY). */
  readonly key: Buffer;
  /** Delays (s) before attempts 1..n. */
  readonly schedule: readonly number[];
  /** Lanes (endpoints) worked at once by this replica. */
  readonly concurrency: number;
  readonly leaseMs: number;
  /** Between polls while a retry this replica scheduled is near, or lanes run (ms). */
  readonly pollMs: number;
  /**
   * Between polls at rest (ms, default DISPATCHER_IDLE_POLL_MS): new messages nudge the
   * dispatcher and its own retries wake it when due, so the poll only finds what another replica,
   * or this one before a restart, left behind.
   */
  readonly idlePollMs?: number;
  /** Endpoints failing this long are disabled (ms). */
  readonly disableAfterMs: number;
  readonly metrics: WebhookMetrics;
  readonly logger: Logger;
  /** Messages per batch (one fetch, one record). */
  readonly batch?: number;
  /** Messages a lane sends before it lets the lane go (fairness between endpoints). */
  readonly laneLimit?: number;
  readonly random?: () => number;
}

export interface Dispatcher {
  start(): void;
  /** Work now (new messages were queued). */
  nudge(): void;
  /** Stops claiming, lets the running lanes finish their current attempt and record it. */
  stop(): Promise<void>;
}

/** The default of DispatcherOptions.idlePollMs (issue #43: a process at rest polled every second). */
export const DISPATCHER_IDLE_POLL_MS = 5_000;

/** Due times the dispatcher keeps; beyond them it polls every pollMs. */
const MAX_TRACKED_DUES = 1_000;

export function createDispatcher(o: DispatcherOptions): Dispatcher {
  const batch = o.batch ?? 100;
  const laneLimit = o.laneLimit ?? 500;
  const lanes = new Set<Promise<void>>();
  let stopping = false;
  /** When the retries (and held lines) this replica scheduled come due (ms since epoch); a bounded list. */
  let dues: number[] = [];
  const dueIn = (ms: number): void => {
    // A little after: the attempt's record (and its next attempt time) is written after this.
    if (dues.length < MAX_TRACKED_DUES) dues.push(Date.now() + ms + 100);
  };
  const idlePollMs = Math.max(o.pollMs, o.idlePollMs ?? DISPATCHER_IDLE_POLL_MS);
  const pollMs = (): number => {
    if (lanes.size > 0 || dues.length >= MAX_TRACKED_DUES) return o.pollMs;
    const now = Date.now();
    const passed = dues.some((d) => d <= now);
    dues = dues.filter((d) => d > now);
    if (passed) return o.pollMs;
    const next = dues.length > 0 ? Math.min(...dues) : Infinity;
    return Math.min(Math.max(next - now, o.pollMs), idlePollMs);
  };

  const keysOf = (ep: LaneEndpoint): Signer => {
    const secrets = [ep.secret, ep.previousSecret].filter((s): s is Buffer => s !== null).map((s) => openFor(o.key, ep.id, 'secret', s).toString('utf8'));
    const ed25519 = [ep.signingKey, ep.previousSigningKey].filter((s): s is Buffer => s !== null).map((s) => privateKeyOf(openFor(o.key, ep.id, 'signing-key', s)));
    return createSigner({ secrets, ed25519 });
  };

  const state = (ep: LaneEndpoint, enabled: boolean) => ({ url: ep.url, description: ep.description, eventTypes: ep.eventTypes, enabled, ed25519: ep.publicKey !== '' });

  /** One attempt at one message: its record, and what it says about the endpoint. */
  async function attempt(ep: LaneEndpoint, signer: Signer, m: LaneMessage): Promise<{ record: AttemptRecord; verdict: Verdict; refusal?: NewEvent }> {
    const startedAt = new Date();
    if (m.totalAttempts === 0) o.metrics.firstAttempt.observe(Math.max(0, (startedAt.getTime() - new Date(m.occurredAt).getTime()) / 1000));
    const res = await o.http.post(ep.url, signer.headers(webhookId(m.eventId), startedAt, m.payload), m.payload);
    const verdict: Verdict = res.kind === 'response' ? judgeStatus(res.status) : { outcome: res.outcome, endpointFailure: true };
    o.metrics.attempts.inc({ outcome: verdict.outcome });
    o.metrics.latency.observe({ outcome: verdict.outcome }, res.durationMs / 1000);
    const scheduleAttempts = m.attempts + 1;
    const delivered = verdict.outcome === 'delivered';
    const nextInMs = delivered ? null : (delayBefore(o.schedule, scheduleAttempts + 1, { retryAfterS: res.kind === 'response' ? parseRetryAfter(res.retryAfter) : undefined, random: o.random }) ?? null);
    const status = delivered ? 'delivered' : nextInMs === null ? 'dead' : 'pending';
    if (nextInMs !== null) dueIn(nextInMs);
    if (status === 'dead') o.metrics.deadLettered.inc();
    const record: AttemptRecord = {
      eventId: m.eventId,
      attempt: m.totalAttempts + 1,
      startedAt,
      durationMs: res.durationMs,
      statusCode: res.kind === 'response' ? res.status : null,
      outcome: verdict.outcome,
      response: res.kind === 'response' ? res.body : '',
      error: res.kind === 'error' ? res.error : '',
      status,
      scheduleAttempts,
      nextInMs,
      inLine: m.inLine && verdict.endpointFailure,
    };
    const refusal =
      res.kind === 'error' && res.refusal
        ? event(SUBJECTS.webhookUrlRefused, { endpointId: ep.id, url: ep.url, stage: 'connect', reason: res.refusal.reason, address: res.refusal.address })
        : undefined;
    return { record, verdict, ...(refusal ? { refusal } : {}) };
  }

  /**
   * Works one claimed endpoint until its line is blocked or empty, or it has had its share. A batch
   * is recorded while the next one is sent (records in order, one statement each; the lane waits
   * for them at its end and stops when one says the lease was lost).
   */
  async function lane(ep: LaneEndpoint, token: string): Promise<void> {
    let signer: Signer;
    try {
      signer = keysOf(ep);
    } catch (err) {
      o.logger.error({ endpointId: ep.id, err: (err as Error).message }, 'webhook endpoint secret cannot be opened (WEBHOOK_SECRET_KEY changed?): not sending');
      await o.store.record(ep.id, token, o.leaseMs, [], { healthy: false, holdMs: 60_000 }, []);
      return;
    }
    let sent = 0;
    let cursor = '0';
    let failingSince = ep.failingSince;
    let held = true;
    let recording: Promise<void> = Promise.resolve();
    const record = (records: AttemptRecord[], outcome: EndpointOutcome | undefined, events: NewEvent[]) => {
      recording = recording.then(async () => {
        if (held) held = await o.store.record(ep.id, token, o.leaseMs, records, outcome, events);
      });
    };
    try {
      lane: while (!stopping && held && sent < laneLimit) {
        const messages = await o.store.laneMessages(ep.id, batch, cursor);
        const records: AttemptRecord[] = [];
        const events: NewEvent[] = [];
        let outcome: EndpointOutcome | undefined;
        let stop = false;
        // A slow receiver: record (which extends the lease) well before the lease could run out.
        let cut = false;
        const batchStarted = Date.now();
        for (const m of messages) {
          if (stopping) {
            stop = true;
            break;
          }
          if (Date.now() - batchStarted > o.leaseMs / 3) {
            cut = true;
            break;
          }
          if (!m.due) {
            if (m.inLine) {
              stop = true; // the line waits for it
              break;
            }
            cursor = m.seq;
            continue;
          }
          cursor = m.seq;
          const r = await attempt(ep, signer, m);
          records.push(r.record);
          if (r.refusal) events.push(r.refusal);
          if (r.verdict.outcome === 'delivered') {
            outcome = { healthy: true };
            failingSince = null;
            continue;
          }
          if (!r.verdict.endpointFailure) continue; // this message steps aside
          const since = failingSince ?? new Date();
          failingSince = since;
          const disable = r.verdict.outcome === 'gone' ? 'gone' : Date.now() - since.getTime() >= o.disableAfterMs ? 'failing' : undefined;
          // A dead letter's successor in the line may go at once.
          outcome = { healthy: false, holdMs: r.record.nextInMs ?? 0, ...(disable ? { disable } : {}) };
          dueIn(outcome.holdMs ?? 0);
          if (disable) {
            o.metrics.disabled.inc({ reason: disable });
            events.push(event(SUBJECTS.webhookDisabled, { endpointId: ep.id, after: state(ep, false), before: state(ep, true), changedFields: ['enabled'], reason: disable, previousSecretExpiresAt: undefined }));
            o.logger.warn({ endpointId: ep.id, reason: disable }, 'webhook endpoint disabled');
          }
          stop = true;
          break;
        }
        sent += records.length;
        if (records.length > 0 || outcome || events.length > 0) record(records, outcome, events);
        if (stop || (!cut && messages.length < batch)) break lane;
        // Keep the lease: wait for the records when the batch found nothing to send.
        if (records.length === 0) await recording;
      }
    } finally {
      await recording;
    }
  }

  async function work(): Promise<number> {
    const free = o.concurrency - lanes.size;
    if (free <= 0 || stopping) return 0;
    const token = randomUUID();
    const claimed = await o.store.claimLanes(free, o.leaseMs, token);
    for (const ep of claimed) {
      const p: Promise<void> = lane(ep, token)
        .catch((err: unknown) => o.logger.warn({ endpointId: ep.id, err: (err as Error).message }, 'webhook lane failed; its lease will run out and it is retried'))
        .then(() => o.store.release(ep.id, token).catch(() => undefined))
        .finally(() => {
          lanes.delete(p);
          loop.nudge();
        });
      lanes.add(p);
    }
    return claimed.length;
  }

  const loop = new BatchLoop({ name: 'webhook dispatcher', work, batchSize: o.concurrency, pollMs, logger: o.logger, nudgeDuringBackoff: false });
  let unmeasure: (() => void) | undefined;
  const measure = async () => {
    const [age, counts] = await Promise.all([o.store.queueAgeSeconds(), o.store.counts()]);
    o.metrics.queueAge.set(age);
    o.metrics.pending.set(counts.pending);
    o.metrics.deadLetters.set(counts.dead);
  };
  return {
    start() {
      stopping = false;
      loop.start();
      // The gauges (queue age, pending, dead letters) are measured when /metrics is scraped.
      unmeasure = o.metrics.measureOnScrape(measure);
    },
    nudge: () => loop.nudge(),
    async stop() {
      stopping = true;
      unmeasure?.();
      await loop.stop();
      await Promise.all([...lanes]);
    },
  };
}
