/** The hosted pages' frame (its component, stylesheet and strings: @iam/hosted-pages, as the provider's pages), its heading focused on each step. */
import { Frame, messages as t } from '@iam/hosted-pages';
import { type ReactNode, StrictMode, useEffect, useRef } from 'react';
import { createRoot } from 'react-dom/client';
import { ProblemError } from '../api/problem';
import '@iam/hosted-pages/styles.css';

export function mount(page: ReactNode): void {
  createRoot(document.getElementById('root')!).render(<StrictMode>{page}</StrictMode>);
}

export function HostedPage({ title, children }: { title: string; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [title]);
  return (
    <Frame>
      <h1 tabIndex={-1} ref={heading}>{title}</h1>
      {children}
    </Frame>
  );
}

/**
 * The answer to a token the API refuses: used, expired, or never valid look alike, and nothing
 * names the account (the API answers them alike, 400).
 */
export const LINK_NOT_VALID = t.links.notValid;

/** A refusal that is about the token (not a field of the form). */
export function isTokenRefusal(err: unknown): boolean {
  if (!(err instanceof ProblemError) || err.status !== 400) return false;
  return !(err.problem.errors ?? []).some((e) => /newPassword/.test(e.field));
}

/** A problem in words for these pages: too many tries, the network, or the API's title. */
export function problemText(err: unknown): string {
  if (err instanceof ProblemError) {
    if (err.status === 429) return t.problems.tooMany;
    if (err.status === 0) return `${err.problem.title}. ${err.problem.detail ?? ''}`.trim();
    return `${err.problem.title}${err.problem.traceId ? ` (trace id ${err.problem.traceId})` : ''}`;
  }
  return t.problems.generic;
}

export function NoToken({ what }: { what: string }) {
  return (
    <div role="alert" className="problem">
      <p>{t.links.noToken(what)}</p>
    </div>
  );
}
