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

export function navigate(to: string): void {
  window.history.pushState(null, '', BASE + to);
  window.dispatchEvent(new PopStateEvent('popstate'));
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
