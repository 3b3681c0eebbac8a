/**
 * Signatures of an attempt (Standard Webhooks 1.0): the content signed is
 * `{webhook-id}.{webhook-timestamp}.{body}`; `v1,<base64>` HMAC-SHA256 by the `standardwebhooks`
 * package with each live secret (the current one first; the previous one too during a rotation's
 * grace window), then `v1a,<base64>` Ed25519 with each live signing key, space-separated.
 */
import { type KeyObject, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface SigningKeys {
  /** whsec_ secrets, current first. */
  readonly secrets: readonly string[];
  /** Ed25519 private keys, current first (none unless the endpoint signs v1a). */
  readonly ed25519: readonly KeyObject[];
}

export interface Signer {
  /** The headers of one attempt at `timestamp`. */
  headers(messageId: string, timestamp: Date, body: string): Record<string, string>;
}

export function createSigner(keys: SigningKeys): Signer {
  const hmacs = keys.secrets.map((s) => new Webhook(s));
  return {
    headers(messageId, timestamp, body) {
      const seconds = Math.floor(timestamp.getTime() / 1000);
      const signatures = hmacs.map((w) => w.sign(messageId, timestamp, body));
      if (keys.ed25519.length > 0) {
        const content = Buffer.from(`${messageId}.${seconds}.${body}`);
        for (const k of keys.ed25519) signatures.push(`v1a,${sign(null, content, k).toString('base64')}`);
      }
      return {
        'content-type': 'application/json',
        'user-agent': 'IAM-Webhooks/1',
        'webhook-id': messageId,
        'webhook-timestamp': String(seconds),
        'webhook-signature': signatures.join(' '),
      };
    },
  };
}
