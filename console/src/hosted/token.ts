/**
 * The email-action token of a hosted page: read once from the address (`?token=…`), kept in
 * memory only, and removed from the address bar at once (history.replaceState), so it stays out
 * of the history, bookmarks, a shared screenshot and any later Referer.
 */
let token: string | undefined;
let taken = false;

export function takeToken(): string | undefined {
  if (taken) return token;
  taken = true;
  const params = new URLSearchParams(window.location.search);
  token = params.get('token')?.trim() || undefined;
  if (window.location.search || window.location.hash) window.history.replaceState(null, '', window.location.pathname);
  return token;
}
