import { SpanKind, TraceFlags, context, trace } from '@opentelemetry/api';
import { ATTR_DB_NAMESPACE, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_RESPONSE_STATUS_CODE, ATTR_DB_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';
import { Client } from 'pg';
import { failSpan, startSpan } from '../trace';
import { QueryDeadlineExceeded, queryDeadline } from './query-deadline';

/**
 * The pool's client class: a query made inside a sampled trace is a client span of its own
 * (`{operation} {database}`, with the statement text; parameter values are never recorded).
 * Queries outside any traced work (readiness pings, the outbox relay's polling) make none.
 * Given to pg-pool as its `Client` option, so no module is patched and it works the same
 * under `node` and jest. Inside withQueryDeadline, each query is bounded by the deadline
 * (query-deadline.ts).
 */
export class TracedPgClient extends Client {}

type AnyQuery = (this: Client, ...args: unknown[]) => unknown;
// eslint-disable-next-line @typescript-eslint/unbound-method -- pg's own query, always called with .apply on the client it runs for
const plainQuery = Client.prototype.query as unknown as AnyQuery;
const MAX_STATEMENT_CHARS = 2_000;

type Callback = (err: unknown, res: unknown) => void;

/**
 * Runs a query that must be answered by `deadline`: refused at once past it; otherwise, when no
 * answer has come by then, the connection is closed (the pool drops it) and the query fails with
 * QueryDeadlineExceeded.
 */
function boundedQuery(client: Client, args: unknown[], deadline: number): unknown {
  const last = args.length - 1;
  const callback = typeof args[last] === 'function' ? (args[last] as Callback) : undefined;
  const left = deadline - Date.now();
  if (left <= 0) {
    const err = new QueryDeadlineExceeded();
    if (!callback) return Promise.reject(err);
    process.nextTick(() => callback(err, undefined));
    return undefined;
  }
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    // Reset, not closed: a close would leave the statement in the kernel's send queue, delivered
    // (and committed) once a partition heals; a reset drops it.
    const stream = (client as unknown as { connection: { stream: { resetAndDestroy?: () => void; destroy(): void } } }).connection.stream;
    if (typeof stream.resetAndDestroy === 'function') stream.resetAndDestroy();
    else stream.destroy();
  }, left);
  const settled = (err: unknown): unknown => {
    clearTimeout(timer);
    return late && err && !(err instanceof QueryDeadlineExceeded) ? new QueryDeadlineExceeded(err) : err;
  };
  if (callback) {
    args[last] = (err: unknown, res: unknown) => callback(settled(err), res);
    return plainQuery.apply(client, args);
  }
  return (plainQuery.apply(client, args) as Promise<unknown>).then(
    (res) => {
      clearTimeout(timer);
      return res;
    },
    (err: unknown) => {
      throw settled(err);
    },
  );
}

(TracedPgClient.prototype as unknown as { query: AnyQuery }).query = function tracedQuery(this: Client, ...args: unknown[]): unknown {
  const first = args[0] as { text?: unknown; submit?: unknown } | string | undefined;
  const streaming = typeof first === 'object' && first !== null && typeof first.submit === 'function';
  const deadline = streaming ? undefined : queryDeadline();
  const send = (a: unknown[]): unknown => (deadline === undefined ? plainQuery.apply(this, a) : boundedQuery(this, a, deadline));
  // Sampled, not merely recording: work a request left running in the background after its span ended is traced too.
  const parent = trace.getSpanContext(context.active());
  if (streaming || !parent || !(parent.traceFlags & TraceFlags.SAMPLED)) return send(args);
  const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : '';
  const operation = /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  const params = (this as unknown as { connectionParameters?: { database?: string; application_name?: string } }).connectionParameters;
  const { span } = startSpan(`${operation} ${params?.database ?? 'postgresql'}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_DB_SYSTEM_NAME]: 'postgresql',
      [ATTR_DB_NAMESPACE]: params?.database ?? '',
      [ATTR_DB_OPERATION_NAME]: operation,
      [ATTR_DB_QUERY_TEXT]: text.length > MAX_STATEMENT_CHARS ? `${text.slice(0, MAX_STATEMENT_CHARS)}…` : text,
      ...(params?.application_name ? { 'iam.service': params.application_name } : {}),
    },
  });
  const done = (err: unknown): void => {
    if (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string') span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, code);
      failSpan(span, err);
    }
    span.end();
  };
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (err: unknown, res: unknown) => void;
    args[last] = (err: unknown, res: unknown) => {
      done(err);
      callback(err, res);
    };
    return send(args);
  }
  return (send(args) as Promise<unknown>).then(
    (res) => {
      done(undefined);
      return res;
    },
    (err: unknown) => {
      done(err);
      throw err;
    },
  );
};
