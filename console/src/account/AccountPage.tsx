/**
 * The account page's frame (the hosted pages' design): the brand bar with who is signed in and
 * "Sign out", an in-page list of the sections, and each section (sections.ts) in its own labelled
 * region with its heading. Shown once signed in; main.tsx handles the sign-in.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { signOut } from '../auth/oidc';
import { ProblemAlert } from '../components/ui';
import { account, accountKeys } from './api';
import { InvitationNotice } from './invitation';
import { SECTIONS } from './sections';

export const ACCOUNT_URI = `${window.location.origin}/account`;

export function AccountPage() {
  const me = useQuery({ queryKey: accountKeys.me, queryFn: account.me });
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <>
      <a href="#main" className="skip">Skip to content</a>
      <header>
        <span className="brand">IAM</span>
        <span className="who">{me.data?.email}</span>
        <button type="button" onClick={() => void signOut(ACCOUNT_URI)}>Sign out</button>
      </header>
      <main id="main" className="account">
        <h1 tabIndex={-1} ref={heading}>Your account</h1>
        {me.data ? (
          <>
            <p>
              Signed in as {me.data.firstName} {me.data.lastName}.
            </p>
            <InvitationNotice />
            <nav aria-label="Sections of this page">
              <ul className="links">
                {SECTIONS.map((s) => <li key={s.id}><a href={`#${s.id}`}>{s.title}</a></li>)}
              </ul>
            </nav>
            {SECTIONS.map(({ id, title, Component }) => (
              <section key={id} id={id} aria-labelledby={`${id}-heading`}>
                <h2 id={`${id}-heading`}>{title}</h2>
                <Component me={me.data} />
              </section>
            ))}
          </>
        ) : me.isPending ? (
          <p role="status">Loading your account…</p>
        ) : (
          <ProblemAlert error={me.error} />
        )}
      </main>
    </>
  );
}
