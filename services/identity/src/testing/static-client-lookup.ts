/**
 * A test double of the provider's client registry: a ClientLookup over a fixed list, which the
 * e2e suites hand the provider (startTestSystem's identityClients). Secrets are kept as SHA-256
 * and compared in constant time. Production reads PgClientStore.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ClientLookup, OAuthClient } from '../domain/clients';

export class StaticClientLookup implements ClientLookup {
  private readonly clients = new Map<string, { client: OAuthClient; secretHash?: Buffer }>();

  constructor(clients: ReadonlyArray<{ client: OAuthClient; secret?: string }> = []) {
    for (const c of clients) this.add(c.client, c.secret);
  }

  add(client: OAuthClient, secret?: string): void {
    this.clients.set(client.clientId, { client, secretHash: secret === undefined ? undefined : hash(secret) });
  }

  remove(clientId: string): void {
    this.clients.delete(clientId);
  }

  async find(clientId: string): Promise<OAuthClient | null> {
    return this.clients.get(clientId)?.client ?? null;
  }

  async verifySecret(clientId: string, secret: string): Promise<boolean> {
    const c = this.clients.get(clientId);
    if (!c?.secretHash || c.client.type !== 'confidential') return false;
    return timingSafeEqual(c.secretHash, hash(secret));
  }
}

function hash(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
