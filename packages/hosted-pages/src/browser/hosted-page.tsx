/**
 * The frame of the hosted pages the browser renders (reset, verification): the pages' Frame with
 * its heading focused on each step (a screen reader hears the new step), and what their email
 * actions come to, in their terms.
 */
import { type ReactNode, useEffect, useRef } from 'react';
import { messages as t } from '../messages';
import { Frame } from '../pages/frame';

export function HostedPage({ title, children }: { title: string; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [title]);
  return (
    <Frame>
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </Frame>
  );
}

/**
 * What an email action's call came to: done; the link refused (used, expired and never valid look
 * alike, and nothing names the account); a field's refusal (`message`, the API's words); or
 * another problem, in words (`text`). The API client that calls makes it (the console's).
 */
export type ActionOutcome = { readonly ok: true } | { readonly ok: false; readonly kind: 'link-not-valid' } | { readonly ok: false; readonly kind: 'field'; readonly message: string } | { readonly ok: false; readonly kind: 'problem'; readonly text: string };

/** A page opened without its token. */
export function NoToken({ what }: { what: string }) {
  return (
    <div role="alert" className="problem">
      <p>{t.links.noToken(what)}</p>
    </div>
  );
}

/** A problem announced as it appears. */
export function Announced({ text }: { text: string | undefined }) {
  return (
    <div aria-live="assertive">
      {text ? (
        <div role="alert" className="problem">
          <p>{text}</p>
        </div>
      ) : null}
    </div>
  );
}

/** A step's end: its title and what happened (announced), and where to go on. */
export function Finished({ title, text, children }: { title: string; text: string; children?: ReactNode }) {
  return (
    <HostedPage title={title}>
      <p role="status" className="notice">
        {text}
      </p>
      {children}
    </HostedPage>
  );
}

/** A link that cannot be used (the same words whatever the reason), and where to go on. */
export function LinkNotValid({ children }: { children?: ReactNode }) {
  return (
    <HostedPage title={t.links.notValidTitle}>
      <div role="alert" className="problem">
        <p>{t.links.notValid}</p>
      </div>
      {children}
    </HostedPage>
  );
}
