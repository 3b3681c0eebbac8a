/**
 * What every string a request carries must be: plain text. NUL and the other control characters
 * (tab, line feed and carriage return aside) and lone surrogates are refused wherever a request's
 * strings enter: the gateway's schemas (their `text` format), the OpenID provider's parameters
 * and identifiers. A NUL reaching PostgreSQL is an error of the database (a 500), not of the input.
 */

/** C0 controls but \t \n \r, DEL, C1 controls, and a surrogate that is not half of a pair. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const NOT_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\p{Cs}/u;

/** Whether `s` is plain text: no control character (but tab, line feed, carriage return), no lone surrogate. */
export function isPlainText(s: string): boolean {
  return !NOT_TEXT.test(s);
}
