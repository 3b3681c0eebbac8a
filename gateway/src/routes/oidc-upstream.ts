/**
 * The provider proxy's deadline and failures (issue #35, items 2 and 3). Every proxied request
 * has a deadline (IDENTITY_OP_TIMEOUT_MS, by default UPSTREAM_TIMEOUT_MS, as the gRPC calls): no
 * answer by then → 504; the provider refusing, resetting or dropping the connection → 503. Both
 * carry Retry-After. A browser (an Accept naming text/html: the sign-in pages, the authorization
 * and logout endpoints) gets a short HTML page; anything else a problem+json that also carries the
 * OAuth error members (`error: temporarily_unavailable`), so an OAuth client reads it as the
 * provider's own errors. The deadline travels to the provider as `iam-timeout-ms` (what is left of
 * it, as gRPC's grpc-timeout), so it stops its own work (database queries) in time and answers 503
 * itself; the value a client sends is replaced.
 */
import { AppError, TIMEOUT_MS_HEADER, internalError, isDependencyUnreachable, newTraceId, problemType, retryAfterOf } from '@iam/platform/core';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../plugins/app/errors';

/** The request header that carries the milliseconds left of the proxy's deadline to the provider. */
export const TIMEOUT_HEADER = TIMEOUT_MS_HEADER;

/** reply-from's and undici's errors that mean the deadline passed (headers, body, connect). */
const TIMEOUT_CODES = new Set(['FST_REPLY_FROM_GATEWAY_TIMEOUT', 'FST_REPLY_FROM_TIMEOUT', 'FST_REPLY_FROM_HTTP_REQUEST_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/**
 * The connection reset or closed before an answer (a refused one is ECONNREFUSED, which
 * isDependencyUnreachable knows): the provider is not there (restarting, stopped, crashed).
 */
const UNREACHABLE_CODES = new Set(['FST_REPLY_FROM_SERVICE_UNAVAILABLE', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** The codes of an error and of its causes. */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/** The answer for a failed proxied request: 504 (the deadline passed), 503 (the provider unreachable), else an internal error. */
export function proxyFailure(error: unknown): AppError {
  const codes = codesOf(error);
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return new AppError('TIMEOUT', 'The identity provider did not answer in time; try again shortly.', { cause: error });
  if (codes.some((c) => UNREACHABLE_CODES.has(c)) || isDependencyUnreachable(error)) return AppError.unavailable('The identity provider is unavailable; try again shortly.', error);
  return internalError(error);
}

/** Whether the caller is a browser asking for a page (not an OAuth client or a page's script). */
function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return /\btext\/html\b/i.test(accept) && !/\bapplication\/(?:[a-z.+-]*\+)?json\b/i.test(accept);
}

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The page a browser gets when the provider cannot answer: nothing loaded, never framed, never stored. */
export function unavailablePage(traceId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Try again in a moment · IAM</title>
</head>
<body>
<main>
<h1>Try again in a moment</h1>
<p>Sign-in is unavailable right now. Wait a moment, then reload this page.</p>
<p><small>Reference: ${escape(traceId)}</small></p>
</main>
</body>
</html>`;
}

/** Answers a proxied request the provider did not answer (nothing when an answer has left already). */
export function answerProxyFailure(req: FastifyRequest, reply: FastifyReply, err: AppError, logger: Pick<FastifyBaseLogger, 'error'>): void {
  if (reply.sent || reply.raw.headersSent) return;
  // A 503 or 504 is the outage's (reply-from logs each failed request as a warning); anything else is ours.
  if (err.code === 'INTERNAL') logger.error({ err: err.cause, method: req.method, url: req.routeOptions?.url }, 'proxying to the identity provider failed');
  if (err.httpStatus >= 500 && err.code !== 'INTERNAL' && wantsHtml(req)) {
    const traceId = req.trace?.traceId ?? newTraceId();
    void reply
      .code(err.httpStatus)
      .headers({
        'x-trace-id': traceId,
        'retry-after': String(retryAfterOf(err)),
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
      })
      .type('text/html; charset=utf-8')
      .send(unavailablePage(traceId));
    return;
  }
  if (err.code === 'INTERNAL') {
    void sendProblem(req, reply, err);
    return;
  }
  // RFC 6749 §4.1.2.1's temporarily_unavailable beside the problem's members, for OAuth clients.
  void sendProblem(req, reply, err, { type: problemType(err.code), members: { error: 'temporarily_unavailable', error_description: err.detail } });
}

/**
 * The deadline of each proxied request: the hook that starts it (answering 504 when it passes with
 * nothing sent), the header that tells the provider what is left of it, and the response handler
 * that drops an answer arriving after the 504 left.
 */
export function proxyDeadline(timeoutMs: number, logger: Pick<FastifyBaseLogger, 'error'>) {
  const deadlines = new WeakMap<object, number>();
  return {
    onRequest: (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      deadlines.set(req, Date.now() + timeoutMs);
      const timer = setTimeout(() => answerProxyFailure(req, reply, proxyFailure({ code: 'FST_REPLY_FROM_GATEWAY_TIMEOUT' }), logger), timeoutMs);
      reply.raw.once('close', () => clearTimeout(timer));
      done();
    },
    /** Milliseconds left of the request's deadline (at least 1). */
    left: (req: object): string => String(Math.max(1, Math.round((deadlines.get(req) ?? Date.now() + timeoutMs) - Date.now()))),
    onResponse: (_req: unknown, reply: { sent: boolean; raw: { headersSent: boolean }; send(body: unknown): unknown }, res: { stream: { destroy(): unknown } }): void => {
      if (reply.sent || reply.raw.headersSent) res.stream.destroy();
      else reply.send(res.stream);
    },
  };
}
