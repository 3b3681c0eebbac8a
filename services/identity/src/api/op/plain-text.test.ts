/**
 * The provider's request targets and forms are plain text (issue #35, item 6): a control
 * character anywhere in the path, a query parameter's name or value, or a form field is found
 * (percent-encoded or not); tab, line feed and carriage return pass, as at the REST edge.
 */
import { isPlainForm, notPlainText } from './plain-text';

describe("plain text in the provider's requests", () => {
  it.each([
    ['/oidc/auth?client_id=iam-console&state=abc', undefined],
    ['/oidc/auth?claims=%7B%0A%22id_token%22%3A%7B%7D%7D', undefined],
    ['/oidc/auth?client_id=a%00b', 'client_id'],
    ['/oidc/auth?client_id=ok&state=%07', 'state'],
    ['/oidc/auth?st%1Bate=x', 'query'],
    ['/oidc/interaction/abc%00def', 'path'],
    ['/oidc/device?user_code=ABCD%C2%85EFGH', 'user_code'],
    ['/oidc/auth?x=%zz', undefined],
    ['/oidc/%zz', undefined],
  ])('%s → %s', (target, found) => {
    expect(notPlainText(target)).toBe(found);
  });

  it('a form with a control character in a name or a value is not plain; tab and line breaks are', () => {
    expect(isPlainForm(new URLSearchParams({ email: 'a@b.c', password: 'p\tq\r\n' }))).toBe(true);
    expect(isPlainForm(new URLSearchParams({ email: 'a\u0000@b.c' }))).toBe(false);
    expect(isPlainForm(new URLSearchParams({ ['e\u007f']: 'x' }))).toBe(false);
  });
});
