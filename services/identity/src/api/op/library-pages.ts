/**
 * The pages oidc-provider renders itself (logout, device code, the library's errors), in the
 * hosted pages' look and headers. A sign-in resumed after its interaction expired says so; one its
 * database or the directory could not serve is the try-again page, 503 with Retry-After (issue #35).
 */
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '@iam/platform';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { OpPages } from '../../infra/oidc/provider';
import { isUnavailable } from '../../infra/oidc/unavailable';
import { tryAgainPage } from './answers';
import { LogoutPage, MessagePage, UserCodeConfirmPage, UserCodeInputPage, messages as t } from '@iam/hosted-pages';
import { renderPage } from '@iam/hosted-pages/server';
import { pageHeaders } from './page-headers';

export const SIGN_IN_EXPIRED = t.signInErrors.expired;
const failed = (prefix: string, message: string): string => renderPage(MessagePage, { prefix, title: t.signInErrors.title, message });

export function opPages(prefix: string): OpPages {
  const html = (ctx: KoaContextWithOIDC, body: string, status?: number, formTargets: readonly string[] = []): void => {
    for (const [k, v] of Object.entries(pageHeaders(prefix, formTargets))) ctx.set(k, v);
    if (status) ctx.status = status;
    ctx.body = body;
  };
  const unavailable = (ctx: KoaContextWithOIDC): void => {
    ctx.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    html(ctx, tryAgainPage(prefix), 503);
  };
  return {
    // The confirmation's post ends at the post-logout redirect URI (checked against the client's registration before this page).
    logoutSource: (ctx, form) => html(ctx, renderPage(LogoutPage, { prefix, form, clientName: ctx.oidc.client?.clientName }), undefined, stringParam(ctx.oidc.params?.post_logout_redirect_uri)),
    postLogoutSuccessSource: (ctx) => html(ctx, renderPage(MessagePage, { prefix, title: t.logout.doneTitle, message: t.logout.done })),
    userCodeInputSource: (ctx, form, _out, err) =>
      err && isUnavailable(err)
        ? unavailable(ctx)
        : html(ctx, renderPage(UserCodeInputPage, { prefix, form: labelUserCode(form), error: err ? t.device.invalidCode : undefined })),
    userCodeConfirmSource: (ctx, form, _client, _info, userCode) =>
      html(ctx, renderPage(UserCodeConfirmPage, { prefix, form, clientName: ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? '', userCode })),
    successSource: (ctx) => html(ctx, renderPage(MessagePage, { prefix, title: t.device.doneTitle, message: t.device.done })),
    // A sign-in resumed after its interaction expired (or was used) says so, as the pages do;
    // one its database or the directory could not serve is the try-again page (503).
    renderError: (ctx, out, err) =>
      isUnavailable(err)
        ? unavailable(ctx)
        : html(
            ctx,
            failed(prefix, err.name === 'SessionNotFound' ? SIGN_IN_EXPIRED : out.error_description ? `${out.error}: ${out.error_description}` : out.error),
            ctx.status >= 400 ? ctx.status : 400,
          ),
  };
}

/** A parameter's value as a list of one (none when absent or not a string): a form's target for the pages' CSP. */
export function stringParam(v: unknown): string[] {
  return typeof v === 'string' && v ? [v] : [];
}

/**
 * The provider's user-code input gets a label and help text (its own form has neither), and
 * loses its inline onfocus handler (the pages' CSP refuses inline script; selecting the field's
 * text on focus is all it did).
 */
function labelUserCode(form: string): string {
  return form.replace(/\s+onfocus="[^"]*"/, '').replace(
    /<input([^>]*)name="user_code"([^>]*)>/,
    `<div class="field"><label for="user_code">${t.device.code}</label><input id="user_code" aria-describedby="code-help"$1name="user_code"$2></div>`,
  );
}
