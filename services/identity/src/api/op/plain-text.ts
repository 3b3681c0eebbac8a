/**
 * The provider's requests carry plain text only (issue #35, item 6), as the REST edge's do
 * (platform isPlainText): a NUL in a client_id, a state or an interaction's uid reached
 * PostgreSQL and was a 500. The request target (path and query) is checked here before anything
 * routes it, and the hosted pages' forms as they are read (http.ts); identifiers in the library's
 * form bodies are refused by the stores (no record has such an id: the client lookup and the
 * adapter answer "not found", the library's invalid_client or invalid_grant).
 */
import { isPlainText } from '@iam/platform';

/** Where a request target is not plain text: `path`, or the query parameter's name; undefined when it is. */
export function notPlainText(target: string): string | undefined {
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  let path = rawPath;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    // A malformed escape is not a control character: the router answers it.
  }
  if (!isPlainText(path)) return 'path';
  if (q < 0) return undefined;
  for (const [name, value] of new URLSearchParams(target.slice(q + 1))) {
    if (!isPlainText(name)) return 'query';
    if (!isPlainText(value)) return name;
  }
  return undefined;
}

/** Whether every field of a form is plain text. */
export function isPlainForm(form: URLSearchParams): boolean {
  for (const [name, value] of form) if (!isPlainText(name) || !isPlainText(value)) return false;
  return true;
}
