/**
 * The lazy-migration hook: the legacy system's endpoint checks a password for a user imported
 * with `passwordMigration: "hook"`. POST JSON `{email, password, externalId}` with
 * `Authorization: Bearer <secret>`; a 200 answer `{"valid": true}` is the only yes. 3 s at most:
 * a timeout, a 5xx or a network failure is `unavailable`, which the sign-in treats as a failure
 * (fail closed). The password travels only in the request body, never in a log.
 */
import type { LegacyPasswordHook } from '../domain/ports';

export const HOOK_TIMEOUT_MS = 3_000;

export function httpMigrationHook(config: { url: string; secret: string }, timeoutMs = HOOK_TIMEOUT_MS): LegacyPasswordHook {
  return {
    async check(request) {
      let res: Response;
      try {
        res = await fetch(config.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${config.secret}` },
          body: JSON.stringify(request),
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'error',
        });
      } catch {
        return 'unavailable';
      }
      if (res.status >= 500) {
        await res.body?.cancel();
        return 'unavailable';
      }
      if (res.status !== 200) {
        await res.body?.cancel();
        return 'invalid';
      }
      try {
        const body: unknown = await res.json();
        return typeof body === 'object' && body !== null && (body as { valid?: unknown }).valid === true ? 'valid' : 'invalid';
      } catch {
        return 'unavailable';
      }
    },
  };
}
