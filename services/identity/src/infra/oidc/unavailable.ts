/**
 * The provider when it cannot serve now (issue #35, item 2): its database unreachable (refused,
 * terminated, shut down, the pool's connection timeout, a query past the request's deadline) or
 * the directory unavailable. oidc-provider answers any error it does not know as `server_error`
 * 500; such a failure is a 503 with Retry-After instead, and a warning, not an error, in the log.
 *
 * The body is `{"error":"temporarily_unavailable"}`: RFC 6749 §4.1.2.1 defines the code for the
 * authorization endpoint, and it is the registered OAuth error for "try again later"; at the token
 * endpoint (whose §5.2 list has nothing for it) and the other JSON endpoints it says the same, so a
 * client can tell an outage from a bug (`server_error`) and retry after Retry-After. The pages the
 * library renders get the same status through renderError (api/op/http.ts).
 */
import { AppError, type Logger, UNAVAILABLE_RETRY_AFTER_SECONDS, isDependencyUnreachable } from '@iam/platform';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Provider } from './provider';

/** Whether a failure means "not now" (a dependency down or late), not a bug. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'UNAVAILABLE' || err.code === 'TIMEOUT';
  return isDependencyUnreachable(err);
}

export const UNAVAILABLE_ERROR = { error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; try again in a moment.' } as const;

/** Answers 503 temporarily_unavailable with Retry-After. */
export function answerUnavailable(ctx: Pick<KoaContextWithOIDC, 'status' | 'body' | 'set'>): void {
  ctx.status = 503;
  ctx.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  ctx.set('cache-control', 'no-store');
  ctx.body = { ...UNAVAILABLE_ERROR };
}

const isServerErrorBody = (body: unknown): boolean => typeof body === 'object' && body !== null && (body as { error?: unknown }).error === 'server_error';

/**
 * Logs the library's server errors (a warning when the cause is unavailable) and turns its
 * `server_error` 500 for such a cause into the 503, as does any such failure thrown out of the
 * routes. Install it before the provider's other middleware (it is the outermost).
 */
export function answerUnavailableWith503(provider: Provider, logger: Logger): void {
  const unavailable = new WeakSet<object>();
  const warn = (ctx: { path: string }, err: unknown) => logger.warn({ err: (err as Error)?.message, path: ctx.path }, 'OpenID provider: a dependency is unavailable; answered 503');
  provider.on('server_error', (ctx: KoaContextWithOIDC, err: unknown) => {
    if (!isUnavailable(err)) {
      logger.error({ err }, 'OpenID provider error');
      return;
    }
    unavailable.add(ctx);
    warn(ctx, err);
  });
  provider.use(async (ctx, next: () => Promise<void>) => {
    try {
      await next();
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      warn(ctx, err);
      answerUnavailable(ctx);
      return;
    }
    if (unavailable.has(ctx) && ctx.status === 500 && isServerErrorBody(ctx.body)) answerUnavailable(ctx);
  });
}
