/**
 * What every hosted page shares: the brand bar and the one narrow column (`Frame`, also the
 * console's reset and verification pages' frame), the document around it for the pages identity
 * renders on the server (`Document`: the one stylesheet, the passkey scripts when a page needs
 * them, nothing inline), and the problem region a form's fields point at (`Problem`).
 */
import type { ReactNode } from 'react';
import { messages as t } from '../messages';
import { SIGNIN_SCRIPT_PATH, STYLESHEET_PATH, WEBAUTHN_SCRIPT_PATH } from './paths';

export function Frame({ children }: { children: ReactNode }) {
  return (
    <>
      <header>
        <span className="brand">{t.brand}</span>
      </header>
      <main id="main" className="signin">
        {children}
      </main>
    </>
  );
}

export interface DocumentProps {
  /** The provider's path prefix (`/oidc`): its assets are under it. */
  readonly prefix: string;
  readonly title: string;
  /** The passkey scripts (@simplewebauthn/browser's bundle and signin-script.ts), same-origin, deferred. */
  readonly scripts?: boolean;
  readonly children: ReactNode;
}

/** A whole page rendered on the server (static HTML; `server.ts` adds the doctype). */
export function Document({ prefix, title, scripts = false, children }: DocumentProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title}${t.titleSuffix}`}</title>
        <link rel="stylesheet" href={prefix + STYLESHEET_PATH} />
        {scripts ? <script src={prefix + WEBAUTHN_SCRIPT_PATH} defer /> : null}
        {scripts ? <script src={prefix + SIGNIN_SCRIPT_PATH} defer /> : null}
      </head>
      <body>
        <Frame>{children}</Frame>
      </body>
    </html>
  );
}

/** A form's problem, announced when the page loads with it (role="alert"); the fields point at `id`. */
export function Problem({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <div className="problem" id={id} role="alert">
      <p>{message}</p>
    </div>
  );
}

/** The attributes of a field the problem `id` is about (none without a problem). */
export const invalidIf = (id: string, error: string | undefined) => (error ? { 'aria-invalid': true, 'aria-describedby': id } : {});
