/**
 * The device flow's user pages answer anonymous input with a 400 page (issue #34 item 8). A POST
 * of `/device` without the provider's session cookie, or `/device/<anything>` (a resume of no
 * sign-in), fails in the library: its error handler renders the code page again and gives the
 * session it never stored a new form secret, then the route's own session save throws on that
 * unstored session, and Koa answered 500 with the stack trace on stderr. The library's answer was
 * already a 4xx; that answer becomes the hosted error page (no form: its secret was never kept,
 * so the user is sent back to the device page). Anything else still fails as before.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '@iam/platform';
import type { OpPages } from './provider';

export const DEVICE_PAGE_EXPIRED = 'This device sign-in has expired or was already used. Open the device page again and enter the code.';

/** The provider middleware (provider.use) for the pages under `{prefix}/device`, the device's own `/device/auth` excepted. */
export function devicePageErrors(prefix: string, pages: Pick<OpPages, 'renderError'>, logger: Logger) {
  const device = `${prefix}/device`;
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    try {
      await next();
    } catch (err) {
      const page = ctx.path === device || (ctx.path.startsWith(`${device}/`) && ctx.path !== `${device}/auth`);
      if (!page || ctx.status < 400 || ctx.status >= 500) throw err;
      logger.debug({ err: err instanceof Error ? err.message : String(err), path: ctx.path }, 'device page refused');
      pages.renderError(ctx, { error: 'invalid_request', error_description: DEVICE_PAGE_EXPIRED }, err instanceof Error ? err : new Error(String(err)));
    }
  };
}
