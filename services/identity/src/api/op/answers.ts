/**
 * The provider listener's answers to a request it will not or cannot serve, whatever page it is
 * (issue #35): a request target that is not plain text (items 6: invalid_request, before
 * anything looks it up), and a request its database or the directory could not serve in time
 * (item 2: 503 with Retry-After, the try-again page, or JSON to the pages' scripts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '@iam/platform';
import { MessagePage, messages as t } from '@iam/hosted-pages';
import { renderPage } from '@iam/hosted-pages/server';
import { pageHeaders } from './page-headers';
import { notPlainText } from './plain-text';

/** The page of a request the provider cannot serve now. */
export const tryAgainPage = (prefix: string): string => renderPage(MessagePage, { prefix, title: t.signInErrors.unavailableTitle, message: t.signInErrors.unavailable });

const RETRY_AFTER = { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) };
const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** Refuses a request whose path or query holds a control character (true when it did). */
export function refusedAsNotPlain(req: IncomingMessage, res: ServerResponse, prefix: string): boolean {
  const bad = notPlainText(req.url ?? '/');
  if (bad === undefined) return false;
  const description = `${bad === 'path' ? 'the path' : bad === 'query' ? 'a query parameter name' : bad.slice(0, 64)} contains control characters`;
  if (/\btext\/html\b/.test(req.headers.accept ?? '')) {
    res.writeHead(400, pageHeaders(prefix));
    res.end(renderPage(MessagePage, { prefix, title: t.signInErrors.title, message: `invalid_request: ${description}` }));
  } else {
    res.writeHead(400, JSON_HEADERS);
    res.end(JSON.stringify({ error: 'invalid_request', error_description: description }));
  }
  return true;
}

/** 503 with Retry-After: JSON to a page's script (`script`), else the try-again page. */
export function answerUnavailable(res: ServerResponse, prefix: string, script: boolean): void {
  if (res.headersSent) return void res.end();
  if (script) {
    res.writeHead(503, { ...JSON_HEADERS, ...RETRY_AFTER });
    return void res.end(JSON.stringify({ error: 'UNAVAILABLE', message: 'The service is temporarily unavailable; try again in a moment.' }));
  }
  res.writeHead(503, { ...pageHeaders(prefix), ...RETRY_AFTER });
  res.end(tryAgainPage(prefix));
}
