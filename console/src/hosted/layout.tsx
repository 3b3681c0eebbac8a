/** The hosted pages' frame, in the console's design (styles.css): a brand bar and one narrow column. */
import { type ReactNode, StrictMode, useEffect, useRef } from 'react';
import { createRoot } from 'react-dom/client';
import { ProblemError } from '../api/problem';
import '../styles.css';

export function mount(page: ReactNode): void {
  createRoot(document.getElementById('root')!).render(<StrictMode>{page}</StrictMode>);
}

export function HostedPage({ title, children }: { title: string; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [title]);
  return (
    <>
      <header>
        <span className="brand">IAM</span>
      </header>
      <main id="main" className="signin">
        <h1 tabIndex={-1} ref={heading}>{title}</h1>
        {children}
      </main>
    </>
  );
}

/**
 * The answer to a token the API refuses: used, expired, or never valid look alike, and nothing
 * names the account (the API answers them alike, 400).
 */
export const LINK_NOT_VALID = 'This link is not valid any more: it was already used, it has expired, or it is incomplete. Ask for a new email and use the link in it.';

/** A refusal that is about the token (not a field of the form). */
export function isTokenRefusal(err: unknown): boolean {
  if (!(err instanceof ProblemError) || err.status !== 400) return false;
  return !(err.problem.errors ?? []).some((e) => /newPassword/.test(e.field));
}

/** A problem in words for these pages: too many tries, the network, or the API's title. */
export function problemText(err: unknown): string {
  if (err instanceof ProblemError) {
    if (err.status === 429) return 'Too many attempts from here. Wait a minute, then try again.';
    if (err.status === 0) return `${err.problem.title}. ${err.problem.detail ?? ''}`.trim();
    return `${err.problem.title}${err.problem.traceId ? ` (trace id ${err.problem.traceId})` : ''}`;
  }
  return 'Something went wrong. Try again.';
}

export function NoToken({ what }: { what: string }) {
  return (
    <div role="alert" className="problem">
      <p>This page opens from the link in {what}. The link is missing its token: open it from the email again, or ask for a new email.</p>
    </div>
  );
}
