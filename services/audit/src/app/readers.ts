/**
 * Who may read the trail: every query (entries, chain verification) is answered only for a caller
 * holding audit.read (or Administrator) now, as the directory stores it, not as the token says:
 * the gateway checks the token, this checks the rights behind it, so a reader demoted after their
 * token was issued is refused. The caller is the end user the gateway's call assertion names (its `sub`).
 */
import { type AccessCheck, requireCurrentPermission } from '@iam/platform';

export const AUDIT_READ = 'audit.read';

/** Each query of `Q`, asked for `actor` (undefined: nobody, who holds nothing). */
export type ForReader<Q> = { [K in keyof Q]: Q[K] extends (...args: infer A) => infer R ? (actor: string | undefined, ...args: A) => R : never };

/**
 * `queries` answering only callers that hold audit.read now: FORBIDDEN otherwise, UNAVAILABLE
 * when the directory cannot say (nothing is read then).
 */
export function forReaders<Q extends object>(queries: Q, access: AccessCheck): ForReader<Q> {
  const guarded = Object.entries(queries).map(([name, query]) => [
    name,
    async (actor: string | undefined, ...args: unknown[]) => {
      await requireCurrentPermission(access, actor, AUDIT_READ);
      return (query as (...a: unknown[]) => Promise<unknown>)(...args);
    },
  ]);
  return Object.fromEntries(guarded) as ForReader<Q>;
}
