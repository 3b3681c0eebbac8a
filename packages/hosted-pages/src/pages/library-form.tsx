/**
 * A form oidc-provider makes itself (sign-out, device code: its hidden xsrf field, its action),
 * placed as the library gives it. It is the library's markup, not a value of the request: the one
 * place the pages take HTML. The pages' buttons name it by its id (`form="op.logoutForm"`).
 */
export function LibraryForm({ html }: { html: string }) {
  return <div dangerouslySetInnerHTML={{ __html: html }} />;
}
