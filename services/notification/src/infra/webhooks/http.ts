/**
 * Sends one webhook attempt with undici: a POST of the exact body, no redirect followed, a hard
 * timeout over the whole exchange, connections pooled per origin (keep-alive) and opened through
 * the SSRF guard's lookup (./guard.ts), so every new connection goes to an address just checked.
 * An IP-literal URL is checked before the request (the connector does no lookup for it).
 */
import { isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { type AddressRefusedError, type GuardOptions, allowedAddresses, guardedLookup, hostOf, refusalIn } from './guard';

/** How much of a response body is kept (the first bytes, for operators). */
export const RESPONSE_KEPT_BYTES = 512;
/** How much of a response body is read before the connection is dropped instead. */
const RESPONSE_READ_LIMIT = 64 * 1024;

export type AttemptResult =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter?: string; readonly body: string; readonly durationMs: number }
  | { readonly kind: 'error'; readonly outcome: 'timeout' | 'network' | 'refused'; readonly error: string; readonly durationMs: number; readonly refusal?: AddressRefusedError };

export interface WebhookHttp {
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
  close(): Promise<void>;
}

type DispatchController = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** An attempt that got no answer: refused by the guard, timed out, or a network error. */
function failure(err: unknown, timedOut: boolean, durationMs: number): AttemptResult {
  const refusal = refusalIn(err);
  if (refusal) return { kind: 'error', outcome: 'refused', error: refusal.message, durationMs, refusal };
  const code = (err as { code?: unknown } | null)?.code;
  const timeout = timedOut || (typeof code === 'string' && TIMEOUT_CODES.has(code));
  const message = err instanceof Error ? `${typeof code === 'string' ? code : err.name}: ${err.message}` : String(err);
  return { kind: 'error', outcome: timeout ? 'timeout' : 'network', error: message.slice(0, 500), durationMs };
}

export function createWebhookHttp(opts: GuardOptions & { readonly timeoutMs: number }): WebhookHttp {
  const agent = new Agent({
    connect: { lookup: guardedLookup(opts), timeout: Math.min(opts.timeoutMs, 10_000) },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    keepAliveTimeout: 4_000,
  });
  return {
    async post(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let target: URL;
      try {
        target = new URL(url);
        const host = hostOf(target);
        if (isIP(host)) await allowedAddresses(host, opts);
      } catch (err) {
        return failure(err, false, elapsed());
      }
      // undici's dispatch with a handler of its own, not request(): no response stream, no abort
      // signal, no promise per step (for an answer of a few bytes that machinery cost the
      // dispatcher about half its CPU per attempt; bench/README.md, scenario 12).
      return new Promise<AttemptResult>((resolve) => {
        const kept: Buffer[] = [];
        let read = 0;
        let status = 0;
        let retryAfter: string | undefined;
        let controller: DispatchController | undefined;
        let timedOut = false;
        let settled = false;
        const settle = (r: AttemptResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(r);
        };
        const answer = () => settle({ kind: 'response', status, ...(retryAfter !== undefined ? { retryAfter } : {}), body: Buffer.concat(kept).toString('utf8'), durationMs: elapsed() });
        // The hard timeout over the whole exchange (undici's own bound each phase only).
        const timer = setTimeout(() => {
          timedOut = true;
          controller?.abort(new Error(`no complete answer within ${opts.timeoutMs} ms`));
          settle(failure(new Error(`no complete answer within ${opts.timeoutMs} ms`), true, elapsed()));
        }, opts.timeoutMs);
        agent.dispatch(
          { origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', headers, body },
          {
            onRequestStart(c) {
              controller = c;
              if (timedOut) c.abort(new Error('timed out before it was sent'));
            },
            onResponseStart(_c, statusCode, responseHeaders) {
              status = statusCode;
              const ra = responseHeaders['retry-after'];
              retryAfter = typeof ra === 'string' ? ra : undefined;
            },
            onResponseData(c, chunk) {
              if (read < RESPONSE_KEPT_BYTES) kept.push(chunk.subarray(0, RESPONSE_KEPT_BYTES - read));
              read += chunk.length;
              if (read > RESPONSE_READ_LIMIT) {
                // Enough of it: the answer is what was read; the connection is dropped.
                answer();
                c.abort(new Error('response too long'));
              }
            },
            onResponseEnd() {
              answer();
            },
            onResponseError(_c, err) {
              settle(failure(err, timedOut, elapsed()));
            },
          },
        );
      });
    },
    close: () => agent.close(),
  };
}
