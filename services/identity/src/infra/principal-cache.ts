/**
 * Identity's principal cache (issue #25 item 4): a user's principal (names, email, roles,
 * permissions) and the permissions of role sets, kept per replica and dropped by the directory's
 * `directory.*` events, the scheme of the gateway's read cache and of Keycloak's user cache. A
 * refresh rotation, or a client_credentials grant, then makes no directory call on a hit, and
 * the claims it signs follow a role change within the event's way through the outbox and NATS
 * (well under the gateway's 1 s revocation bound).
 *
 * - a user event drops that user;
 * - any other directory event (a role, permission or link changed; whatever the directory adds
 *   later) drops everything: a principal carries its roles' permissions;
 * - while events may be missed (the bus connection dropped) nothing is cached (every call goes to
 *   the directory), and a backstop TTL ends every entry whatever happens.
 *
 * Credential checks (`verifyCredentials`, `findAccount`) and writes are never cached.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { type EventHandler, InvalidatedCache, type InvalidatedCacheOptions } from '@iam/platform/bus';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';

type RolePermissions = Array<{ name: string; permissions: string[] }>;

const USER_SUBJECTS: ReadonlySet<string> = new Set([SUBJECTS.userCreated, SUBJECTS.userUpdated, SUBJECTS.userDeleted]);

export interface CachedDirectory {
  /** The directory port, with `principal` and `resolveRoles` answered from the cache. */
  readonly directory: Directory;
  /** The broadcast subscription that keeps the cache right (every replica gets every event). */
  readonly broadcast: { subjects: readonly string[]; handler: EventHandler; onLive: (live: boolean) => void };
}

export function cachedDirectory(inner: Directory, opts: InvalidatedCacheOptions): CachedDirectory {
  const principals = new InvalidatedCache<Principal | null>(opts);
  const roles = new InvalidatedCache<RolePermissions>(opts);
  const flush = () => {
    principals.flush();
    roles.flush();
  };
  return {
    directory: {
      verifyCredentials: (...a) => inner.verifyCredentials(...a),
      findAccount: (email) => inner.findAccount(email),
      resetPassword: (r) => inner.resetPassword(r),
      markEmailVerified: (userId, emailHash) => inner.markEmailVerified(userId, emailHash),
      changeRequiredPassword: (userId, password) => inner.changeRequiredPassword(userId, password),
      // Client writes and consent pages only: asked of the directory itself.
      resolvePermissions: (names) => inner.resolvePermissions(names),
      principal: (userId) => principals.get(`principal:${userId}`, () => inner.principal(userId)),
      resolveRoles: (names) => {
        if (names.length === 0) return inner.resolveRoles(names);
        const key = `roles:${[...new Set(names.map((n) => n.toLowerCase()))].sort().join('\n')}`;
        return roles.get(key, () => inner.resolveRoles(names));
      },
    },
    broadcast: {
      subjects: ['directory.>'],
      handler: async (e) => {
        if (USER_SUBJECTS.has(e.subject)) {
          const { userId } = decodeEvent(e.subject as typeof SUBJECTS.userUpdated, e.data);
          principals.invalidate(`principal:${userId}`);
        } else {
          flush();
        }
      },
      onLive: (live) => {
        principals.setLive(live);
        roles.setLive(live);
      },
    },
  };
}
