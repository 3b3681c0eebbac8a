/**
 * The request a piece of work serves: who asked (the verified token's `sub`), from which client
 * IP and user agent. The gateway opens it for each HTTP request; gRPC clients send it along as
 * metadata (ACTOR_KEY, CLIENT_IP_KEY, USER_AGENT_KEY) and servers open it again around each
 * handler; the outbox stores it with every event as headers (EVENT_CONTEXT_HEADERS), so the
 * audit trail can say who did what from where. It is context for records, never for
 * authorization (the directory authorizes writes on ACTOR_KEY as each call names it).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { activeTraceparent, extractContext, runInContext } from './trace';

export interface RequestContext {
  /** The end user (a verified token's `sub`); set once the gateway has verified the token. */
  actor?: string;
  readonly clientIp?: string;
  readonly userAgent?: string;
}

/** gRPC metadata keys of the client IP and user agent (the actor is ACTOR_KEY). */
export const CLIENT_IP_KEY = 'iam-client-ip';
export const USER_AGENT_KEY = 'iam-user-agent';

/** Event headers that carry a request context (lower case). */
export const EVENT_CONTEXT_HEADERS = { actor: 'iam-actor-sub', clientIp: 'iam-client-ip', userAgent: 'iam-user-agent' } as const;

/** Longest user agent kept (a client may send kilobytes). */
const USER_AGENT_MAX = 512;

const storage = new AsyncLocalStorage<RequestContext>();

/** Printable ASCII only (what gRPC metadata and NATS headers carry), at most `max` characters. */
function printable(s: string | undefined, max: number): string | undefined {
  if (!s) return undefined;
  const clean = s.replace(/[^\x20-\x7e]/g, '?').slice(0, max).trim();
  return clean === '' ? undefined : clean;
}

export function withRequestContext<T>(c: RequestContext, fn: () => T): T {
  return storage.run({ actor: printable(c.actor, 200), clientIp: printable(c.clientIp, 64), userAgent: printable(c.userAgent, USER_AGENT_MAX) }, fn);
}

export function requestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The headers an event gets from the current request context (none outside a request). */
export function eventContextHeaders(c: RequestContext | undefined = requestContext()): Record<string, string> {
  if (!c) return {};
  const h: Record<string, string> = {};
  if (c.actor) h[EVENT_CONTEXT_HEADERS.actor] = c.actor;
  if (c.clientIp) h[EVENT_CONTEXT_HEADERS.clientIp] = c.clientIp;
  if (c.userAgent) h[EVENT_CONTEXT_HEADERS.userAgent] = c.userAgent;
  return h;
}

/**
 * Where deferred work came from (a request recorded now and processed later by a worker): the
 * trace it continues and the request context its events carry. Stored with the work, resumed
 * around its processing.
 */
export interface WorkOrigin {
  readonly traceparent?: string;
  readonly context?: RequestContext;
}

export function captureOrigin(): WorkOrigin {
  const c = requestContext();
  return { traceparent: activeTraceparent(), ...(c ? { context: { ...c } } : {}) };
}

export function resumeOrigin<T>(o: WorkOrigin | undefined, fn: () => Promise<T>): Promise<T> {
  const tp = o?.traceparent;
  const parent = tp ? extractContext((name) => (name === 'traceparent' ? tp : undefined)) : undefined;
  const inContext = () => (o?.context ? withRequestContext(o.context, fn) : fn());
  return parent ? runInContext(parent, inContext) : inContext();
}
