/**
 * Signatures of an attempt (Standard Webhooks 1.0): the content signed is
 * `{webhook-id}.{webhook-timestamp}.{body}`; `v1,<base64>` HMAC-SHA256 with each live secret (the
 * current one first; the previous one too during a rotation's grace window), then `v1a,<base64>`
 * Ed25519 with each live signing key, space-separated.
 *
 * The HMAC is node:crypto's (OpenSSL) over a key imported once per signer: the `standardwebhooks`
 * package computes the same in JavaScript at about five times the CPU, a measurable share of the
 * dispatcher's (bench/README.md, scenario 12). The package stays the reference: every signer checks
 * once, when it is made, that its signature equals the package's for the same secret and content,
 * and the tests verify every delivery with it and with svix.
 */
import { type KeyObject, createHmac, createSecretKey, sign } from 'node:crypto';
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

const PREFIX = 'whsec_';

/** One v1 signer: the secret's key imported once, checked against `standardwebhooks`. */
function hmacSigner(secret: string): (content: string) => string {
  const key = createSecretKey(Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64'));
  const signV1 = (content: string) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
  const probe = new Date(0);
  if (signV1(`msg_probe.0.{}`) !== new Webhook(secret).sign('msg_probe', probe, '{}')) throw new Error('the webhook signer disagrees with standardwebhooks');
  return signV1;
}

export function createSigner(keys: SigningKeys): Signer {
  const hmacs = keys.secrets.map(hmacSigner);
  return {
    headers(messageId, timestamp, body) {
      const seconds = Math.floor(timestamp.getTime() / 1000);
      const content = `${messageId}.${seconds}.${body}`;
      const signatures = hmacs.map((h) => h(content));
      if (keys.ed25519.length > 0) {
        const bytes = Buffer.from(content);
        for (const k of keys.ed25519) signatures.push(`v1a,${sign(null, bytes, k).toString('base64')}`);
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
