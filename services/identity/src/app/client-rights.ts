/**
 * Who may give an OAuth client what (DESIGN §3 escalation rules, applied to the client registry),
 * against the actor's rights as the directory holds them now:
 * - only `clients.manage` holders (or an Administrator) write at all;
 * - a non-Administrator gives a service account only roles whose every permission it holds, never
 *   `Administrator`, and lists as a client's `apiPermissions` only permissions it holds;
 * - acting on a client (change, delete, rotate its secret) is acting with its powers: the actor
 *   must be able to give each of its live roles and list each of its live API permissions;
 * - only an Administrator makes a client a resource server, or acts on one: a resource server
 *   introspects every client's access tokens.
 * Unknown role or permission names are a 400 naming the field.
 */
import { ADMINISTRATOR_ROLE, AppError, isAdministrator } from '@iam/platform';
import type { ClientSettings } from '../domain/clients';
import type { Directory } from '../domain/ports';

export const CLIENTS_MANAGE = 'clients.manage';

/** The user a change acts for (the gateway's verified token `sub`, named in the call's assertion). */
export interface ClientActor {
  readonly userId: string;
}

export interface Rights {
  readonly administrator: boolean;
  readonly permissions: ReadonlySet<string>;
}

type LiveRole = { name: string; permissions: readonly string[] };

export interface ClientRights {
  /** The actor's rights now; FORBIDDEN unless they include clients.manage (a manager demoted since their token was issued writes nothing). */
  of(actor: ClientActor): Promise<Rights>;
  /** The roles as the directory names them (canonical case); VALIDATION on `roles` for unknown ones. */
  roles(names: readonly string[]): Promise<LiveRole[]>;
  /** The permissions as the directory names them (canonical case); VALIDATION on `apiPermissions` for unknown ones. */
  permissions(names: readonly string[]): Promise<string[]>;
  /** FORBIDDEN unless the actor may give every one of these roles (`what` names the act in the message). */
  assertMayGive(rights: Rights, roles: readonly LiveRole[], what: string): void;
  /** FORBIDDEN unless the actor holds every one of these permissions (to list them as a client's API permissions). */
  assertMayList(rights: Rights, permissions: readonly string[], what: string): void;
  /** FORBIDDEN unless the actor is an Administrator: only one makes a client a resource server. */
  assertMayMakeResourceServer(rights: Rights): void;
  /** FORBIDDEN unless the actor may act with the client's powers: its live roles and live API permissions (deleted ones carry none), and a resource server's introspection. */
  assertMayActOn(rights: Rights, client: Pick<ClientSettings, 'roles' | 'apiPermissions' | 'resourceServer'>, what: string): Promise<void>;
}

export function clientRights(directory: Pick<Directory, 'principal' | 'resolveRoles' | 'resolvePermissions'>): ClientRights {
  const unknown = (field: string, kind: string, names: readonly string[]) =>
    AppError.validation(`Unknown ${kind}.`, [{ field, message: `unknown ${kind}(s): ${names.map((n) => JSON.stringify(n)).join(', ')}` }]);

  const r: ClientRights = {
    async of(actor) {
      const p = await directory.principal(actor.userId);
      const rights = p ? { administrator: isAdministrator(p), permissions: new Set(p.permissions) } : { administrator: false, permissions: new Set<string>() };
      if (!rights.administrator && !rights.permissions.has(CLIENTS_MANAGE)) throw AppError.forbidden(`Managing OAuth clients needs the ${CLIENTS_MANAGE} permission.`);
      return rights;
    },

    async roles(names) {
      if (names.length === 0) return [];
      const byLower = new Map((await directory.resolveRoles(names)).map((x) => [x.name.toLowerCase(), x]));
      const missing = names.filter((n) => !byLower.has(n.toLowerCase()));
      if (missing.length > 0) throw unknown('roles', 'role', missing);
      return names.map((n) => byLower.get(n.toLowerCase())!);
    },

    async permissions(names) {
      if (names.length === 0) return [];
      const byLower = new Map((await directory.resolvePermissions(names)).map((x) => [x.name.toLowerCase(), x.name]));
      const missing = names.filter((n) => !byLower.has(n.toLowerCase()));
      if (missing.length > 0) throw unknown('apiPermissions', 'permission', missing);
      return names.map((n) => byLower.get(n.toLowerCase())!);
    },

    assertMayGive(rights, roles, what) {
      if (rights.administrator) return;
      if (roles.some((x) => x.name === ADMINISTRATOR_ROLE)) throw AppError.forbidden(`Only an Administrator may ${what} a client with the Administrator role.`);
      const missing = [...new Set(roles.flatMap((x) => x.permissions.filter((p) => !rights.permissions.has(p))))];
      if (missing.length > 0) throw AppError.forbidden(`Only a caller holding every permission of the client's roles may ${what} it (missing: ${missing.join(', ')}).`);
    },

    assertMayList(rights, permissions, what) {
      if (rights.administrator) return;
      const missing = permissions.filter((p) => !rights.permissions.has(p));
      if (missing.length > 0) throw AppError.forbidden(`Only a caller holding every API permission of the client may ${what} it (missing: ${missing.join(', ')}).`);
    },

    assertMayMakeResourceServer(rights) {
      if (!rights.administrator) throw AppError.forbidden('Only an Administrator may make a client a resource server: it can introspect the tokens of every client.');
    },

    async assertMayActOn(rights, client, what) {
      if (rights.administrator) return;
      if (client.resourceServer) throw AppError.forbidden(`Only an Administrator may ${what} a resource server: it can introspect the tokens of every client.`);
      if (client.roles.length > 0) r.assertMayGive(rights, await directory.resolveRoles(client.roles), what);
      if (client.apiPermissions.length > 0) r.assertMayList(rights, (await directory.resolvePermissions(client.apiPermissions)).map((p) => p.name), what);
    },
  };
  return r;
}
