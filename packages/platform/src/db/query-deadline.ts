/**
 * A deadline for the database work of a request (issue #35, item 3). PostgreSQL's
 * statement_timeout cannot help when the server is unreachable without a word (a network
 * blackhole): the query waits on a socket that never answers, for as long as TCP retries. Inside
 * withQueryDeadline, each query of the pool's clients (TracedPgClient) is given until the deadline:
 * a query started after it fails at once, and one whose answer has not come by then has its
 * connection closed (the pool drops it; a transaction on it is rolled back by the server, or never
 * reaches it), so nothing the caller was not told about is committed later. It fails with
 * QueryDeadlineExceeded, which isDependencyUnreachable counts (a 503, not a 500).
 *
 * The entry point that knows the request's deadline opts in (the OpenID provider's listener, told
 * the gateway's deadline); work that must outlive the request runs outsideQueryDeadline.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context } from '@opentelemetry/api';
import { QUERY_DEADLINE_CODE } from '../errors';
import { runInContext, withDeadline } from '../trace';

const scope = new AsyncLocalStorage<{ readonly deadline: number } | undefined>();

/** A query that did not finish before the deadline of the request it served. */
export class QueryDeadlineExceeded extends Error {
  readonly code = QUERY_DEADLINE_CODE;

  constructor(cause?: unknown) {
    super('the database did not answer before the request deadline', cause === undefined ? undefined : { cause });
    this.name = 'QueryDeadlineExceeded';
  }
}

/**
 * Runs `fn` with its queries bounded by `deadline` (ms since the epoch); the deadline is also the
 * trace context's, so the gRPC calls `fn` makes are bounded by it too (grpc/client.ts).
 */
export function withQueryDeadline<T>(deadline: number, fn: () => T): T {
  return runInContext(withDeadline(context.active(), deadline), () => scope.run({ deadline }, fn));
}

/** Runs `fn` with no query deadline (work a request leaves running after its answer: a retry in the background). */
export function outsideQueryDeadline<T>(fn: () => T): T {
  return runInContext(withDeadline(context.active(), Number.POSITIVE_INFINITY), () => scope.run(undefined, fn));
}

/** The deadline the current work's queries have (ms since the epoch), when one. */
export function queryDeadline(): number | undefined {
  return scope.getStore()?.deadline;
}
