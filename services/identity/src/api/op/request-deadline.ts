/**
 * The deadline of a provider request's work (issue #35, item 3): the gateway tells what is left of
 * its own in TIMEOUT_MS_HEADER (iam-timeout-ms, as gRPC's grpc-timeout); the provider's database
 * queries and directory calls end a tenth of it (at most half a second) earlier, so its own answer
 * (a 503 with Retry-After) reaches the gateway before the gateway gives up (504).
 */

/** Longest deadline a request may be given (the gateway's own is at most this). */
const MAX_TIMEOUT_MS = 120_000;

/** The deadline (ms since the epoch) from the header's value; none when it is absent or malformed. */
export function requestDeadline(header: string | string[] | undefined, now = Date.now()): number | undefined {
  if (typeof header !== 'string' || !/^[0-9]{1,9}$/.test(header)) return undefined;
  const ms = Math.min(Number(header), MAX_TIMEOUT_MS);
  return ms > 0 ? now + ms - Math.min(500, ms / 10) : undefined;
}
