/**
 * Sends one webhook attempt with undici: a POST of the exact body, no redirect followed, a hard
 * timeout over the whole exchange, connections pooled per origin (keep-alive) and opened through
 * the SSRF guard's lookup (./guard.ts), so every new connection goes to an address just checked.
 * An IP-literal URL is checked before the request (the connector does no lookup for it).
 */
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
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
      const signal = AbortSignal.timeout(opts.timeoutMs);
      try {
        const target = new URL(url);
        const host = hostOf(target);
        if (isIP(host)) await allowedAddresses(host, opts);
        const res = await request(target, { dispatcher: agent, method: 'POST', headers, body, signal });
        const kept: Buffer[] = [];
        let read = 0;
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (read < RESPONSE_KEPT_BYTES) kept.push(chunk.subarray(0, RESPONSE_KEPT_BYTES - read));
          read += chunk.length;
          if (read > RESPONSE_READ_LIMIT) {
            res.body.destroy();
            break;
          }
        }
        const retryAfter = res.headers['retry-after'];
        return {
          kind: 'response',
          status: res.statusCode,
          ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
          body: Buffer.concat(kept).toString('utf8'),
          durationMs: elapsed(),
        };
      } catch (err) {
        const refusal = refusalIn(err);
        if (refusal) return { kind: 'error', outcome: 'refused', error: refusal.message, durationMs: elapsed(), refusal };
        const timedOut = signal.aborted || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT' || (err as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT' || (err as { code?: string }).code === 'UND_ERR_CONNECT_TIMEOUT';
        const message = err instanceof Error ? `${(err as { code?: string }).code ?? err.name}: ${err.message}` : String(err);
        return { kind: 'error', outcome: timedOut ? 'timeout' : 'network', error: message.slice(0, 500), durationMs: elapsed() };
      }
    },
    close: () => agent.close(),
  };
}
