/**
 * The session: the access token and the rotating refresh token, both in memory only (a module
 * variable, never localStorage/sessionStorage/cookies), so a script injected later or another tab
 * cannot read them from storage. They come from the OpenID provider (auth/oidc.ts), whose session
 * signs a reload back in. The access token is refreshed shortly before it expires; a failing
 * refresh ends the session (back to sign-in).
 */
export interface Claims {
  sub: string;
  email?: string;
  roles: string[];
  permissions: string[];
  exp?: number;
}

/** Who signed in, from the ID token (refreshes do not repeat it, so it is kept). */
export interface SignedInUser {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  roles: string[];
}

export interface Session {
  token: string;
  refreshToken: string;
  claims: Claims;
  user?: SignedInUser;
}

export interface TokenResponse {
  token: string;
  refreshToken: string;
  expiresIn: number;
  user?: SignedInUser;
}

type Listener = (s: Session | null, reason?: string) => void;

let current: Session | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<Listener>();
let refresher: ((refreshToken: string) => Promise<TokenResponse>) | undefined;

export function decodeClaims(token: string): Claims {
  const part = token.split('.')[1] ?? '';
  const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
  const c = JSON.parse(json) as Partial<Claims> & { sub: string };
  return { sub: c.sub, email: c.email, roles: c.roles ?? [], permissions: c.permissions ?? [], exp: c.exp };
}

export function session(): Session | null {
  return current;
}

export function onSession(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** How the session refreshes itself (set by the API client, which owns the HTTP call). */
export function setRefresher(fn: (refreshToken: string) => Promise<TokenResponse>): void {
  refresher = fn;
}

export function startSession(t: TokenResponse): void {
  current = { token: t.token, refreshToken: t.refreshToken, claims: decodeClaims(t.token), user: t.user ?? current?.user };
  schedule(t.expiresIn);
  for (const l of listeners) l(current);
}

export function endSession(reason?: string): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  current = null;
  for (const l of listeners) l(null, reason);
}

/** Refresh a little before expiry: at 80 % of the lifetime, at most 60 s early. */
function schedule(expiresIn: number): void {
  if (timer) clearTimeout(timer);
  const lead = Math.min(60, expiresIn * 0.2);
  timer = setTimeout(() => void refreshNow(), Math.max(1, expiresIn - lead) * 1000);
}

let inFlight: Promise<boolean> | undefined;
export function refreshNow(): Promise<boolean> {
  inFlight ??= (async () => {
    const s = current;
    if (!s || !refresher) return false;
    try {
      startSession(await refresher(s.refreshToken));
      return true;
    } catch {
      endSession('Your session has ended. Please sign in again.');
      return false;
    } finally {
      inFlight = undefined;
    }
  })();
  return inFlight;
}

/** Administrator passes every policy (DESIGN §3). */
export function can(permission: string): boolean {
  const c = current?.claims;
  return !!c && (c.roles.includes(ADMINISTRATOR) || c.permissions.includes(permission));
}

/** The role itself, for what no permission opens (the development mailbox). */
export const ADMINISTRATOR = 'Administrator';

export function isAdministrator(): boolean {
  return !!current?.claims.roles.includes(ADMINISTRATOR);
}
