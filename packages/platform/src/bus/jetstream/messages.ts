/** What an event looks like on the wire: its headers going out, and an incoming event from a message. */
import type { JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/nats-core';
import type { IncomingEvent, OutgoingEvent } from '../port';
import type { JetStreamNames } from './names';

const OCCURRED_AT = 'Iam-Occurred-At';
const MSG_ID = 'Nats-Msg-Id';

/** The headers a published event carries (the id travels as the publish's `msgID`). */
export function outgoingHeaders(event: OutgoingEvent, traceparent: string | undefined): MsgHdrs {
  const h = natsHeaders();
  h.set(OCCURRED_AT, event.occurredAt.toISOString());
  for (const [k, v] of Object.entries(event.headers ?? {})) h.set(k, v);
  if (traceparent) h.set('traceparent', traceparent);
  return h;
}

/** An event delivered by a stream's consumer. */
export function incomingFromStream(names: JetStreamNames, m: JsMsg): IncomingEvent {
  return {
    id: m.headers?.get(MSG_ID) || `${m.info.stream}:${m.seq}`,
    subject: names.unprefix(m.subject),
    data: m.data,
    occurredAt: parseDate(m.headers?.get(OCCURRED_AT)),
    traceparent: m.headers?.get('traceparent') || undefined,
    headers: headersToRecord(m.headers),
    deliveryCount: m.info.deliveryCount,
  };
}

/** An event received by a core-NATS (broadcast) subscription. */
export function incomingBroadcast(names: JetStreamNames, msg: Msg): IncomingEvent {
  return {
    id: msg.headers?.get(MSG_ID) ?? '',
    subject: names.unprefix(msg.subject),
    data: msg.data,
    occurredAt: parseDate(msg.headers?.get(OCCURRED_AT)),
    traceparent: msg.headers?.get('traceparent') || undefined,
    headers: headersToRecord(msg.headers),
    deliveryCount: 1,
  };
}

/** A JetStream API error for a stream or consumer that does not exist. */
export function isNotFound(err: unknown): boolean {
  const e = err as { code?: string | number; api_error?: { err_code?: number }; message?: string };
  const code = e?.api_error?.err_code;
  return code === 10059 || code === 10014 || /not found/i.test(e?.message ?? '');
}

function parseDate(v: string | undefined): Date {
  const d = v ? new Date(v) : new Date();
  return Number.isNaN(d.getTime()) ? new Date() : d;
}

function headersToRecord(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const k of h.keys()) out[k] = h.get(k);
  return out;
}
