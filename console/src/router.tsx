/** A minimal router over the History API under /console (five routes do not need a routing library). */
import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from 'react';

export const BASE = '/console';

function subscribe(cb: () => void): () => void {
  window.addEventListener('popstate', cb);
  return () => window.removeEventListener('popstate', cb);
}

/** The path below /console, e.g. `/users/42`. */
export function usePath(): string {
  const full = useSyncExternalStore(subscribe, () => window.location.pathname + window.location.search);
  const p = full.startsWith(BASE) ? full.slice(BASE.length) : full;
  return p === '' || p.startsWith('?') ? `/${p}` : p;
}

/** Goes to `to`; `notice` is said on the page arrived at (e.g. "Role deleted."), read with arrivalNotice(). */
export function navigate(to: string, notice?: string): void {
  window.history.pushState(notice ? { notice } : null, '', BASE + to);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** What the navigation that led here asked the page to say (see navigate). */
export function arrivalNotice(): string {
  const state: unknown = window.history.state;
  return typeof state === 'object' && state !== null && typeof (state as { notice?: unknown }).notice === 'string' ? (state as { notice: string }).notice : '';
}

/** A query parameter of the current URL (a page's initial search, say). */
export function queryParam(name: string): string {
  return new URLSearchParams(window.location.search).get(name) ?? '';
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={BASE + to} onClick={onClick} {...rest} />;
}

/** Moves focus to the page's heading after a navigation (screen readers announce the new page). */
export function useFocusHeading(dep: string): void {
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [dep]);
}
