/**
 * The provider's client registry reads, cached (issue #28's grant rate): every token request
 * looks its client up and checks its secret, which were two or three PostgreSQL reads per
 * `client_credentials` grant. Entries (the client, and its secret hash) are kept per replica
 * and dropped
 *
 * - by this replica's own writes, once they committed (the client use cases' answers), so a
 *   rotated secret or a deleted client stops here at once;
 * - by `identity.client.*` events on every replica (within the event's way through the outbox
 *   and NATS, well under a second), and everything while that subscription has a gap (nothing is
 *   kept then);
 * - after `ttlMs` whatever happens.
 *
 * Built-in clients come from configuration and are never stored; an unknown id is cached as
 * unknown until an event names it.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { type EventHandler, InvalidatedCache, type InvalidatedCacheOptions } from '@iam/platform/bus';
import type { ClientUseCases } from '../app/clients';
import type { ClientLookup, ClientSecrets, OAuthClient } from '../domain/clients';
import { secretMatches } from './client-store';

const CLIENT_SUBJECTS: ReadonlySet<string> = new Set([SUBJECTS.clientCreated, SUBJECTS.clientUpdated, SUBJECTS.clientDeleted, SUBJECTS.clientSecretRotated]);

export interface ClientCache {
  readonly lookup: ClientLookup;
  /** Drops what is kept of one client (after a write through this replica committed). */
  invalidate(clientId: string): void;
  readonly broadcast: { subjects: readonly string[]; handler: EventHandler; onLive: (live: boolean) => void };
}

export function cachedClients(inner: ClientLookup & ClientSecrets, opts: InvalidatedCacheOptions): ClientCache {
  const clients = new InvalidatedCache<OAuthClient | null>(opts);
  const secrets = new InvalidatedCache<Buffer | null>(opts);
  const invalidate = (clientId: string) => {
    clients.invalidate(`client:${clientId}`);
    secrets.invalidate(`client-secret:${clientId}`);
  };
  return {
    lookup: {
      find: (clientId) => clients.get(`client:${clientId}`, () => inner.find(clientId)),
      verifySecret: async (clientId, secret) => secretMatches(await secrets.get(`client-secret:${clientId}`, () => inner.secretHash(clientId)), secret),
    },
    invalidate,
    broadcast: {
      subjects: ['identity.client.>'],
      handler: async (e) => {
        if (!CLIENT_SUBJECTS.has(e.subject)) return; // tokens_issued: counts, no change
        invalidate(decodeEvent(e.subject as typeof SUBJECTS.clientUpdated, e.data).clientId);
      },
      onLive: (live) => {
        clients.setLive(live);
        secrets.setLive(live);
      },
    },
  };
}

/** The client use cases, dropping the cache's entries of a client once a write to it committed. */
export function invalidatingClientUseCases(useCases: ClientUseCases, cache: Pick<ClientCache, 'invalidate'>): ClientUseCases {
  return {
    ...useCases,
    create: async (actor, input) => {
      const r = await useCases.create(actor, input);
      cache.invalidate(r.client.clientId);
      return r;
    },
    update: async (actor, clientId, patch) => {
      try {
        return await useCases.update(actor, clientId, patch);
      } finally {
        cache.invalidate(clientId);
      }
    },
    remove: async (actor, clientId) => {
      try {
        await useCases.remove(actor, clientId);
      } finally {
        cache.invalidate(clientId);
      }
    },
    rotateSecret: async (actor, clientId) => {
      try {
        return await useCases.rotateSecret(actor, clientId);
      } finally {
        cache.invalidate(clientId);
      }
    },
  };
}
