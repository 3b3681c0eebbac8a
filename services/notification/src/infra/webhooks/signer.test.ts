/**
 * The signer (node:crypto's HMAC) against the ecosystem's verifiers: standardwebhooks and svix
 * accept its headers, with one secret and with two during a rotation; a byte changed in the body
 * fails both.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Webhook as Svix } from 'svix';
import { createSigner } from './signer';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ type: 'user.created', timestamp: '2026-12-07T10:00:00.000Z', data: { id: 'u1', email: 'zoë@example.com' } });

describe('webhook signer', () => {
  it('signs what standardwebhooks and svix verify, with the current and the previous secret', () => {
    const [current, previous] = [secret(), secret()];
    const headers = createSigner({ secrets: [current, previous], ed25519: [] }).headers('msg_0123456789abcdef0123456789abcdef', new Date(), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const s of [current, previous]) {
      expect(new Webhook(s).verify(body, headers)).toEqual(JSON.parse(body));
      expect(() => new Svix(s).verify(body, headers)).not.toThrow();
    }
    const other = secret();
    expect(() => new Webhook(other).verify(body, headers)).toThrow();
    const changed = body.replace('u1', 'u2');
    expect(() => new Webhook(current).verify(changed, headers)).toThrow();
    expect(() => new Svix(current).verify(changed, headers)).toThrow();
  });

  it('equals the standardwebhooks signature byte for byte', () => {
    const s = secret();
    const at = new Date('2026-12-07T10:00:00Z');
    expect(createSigner({ secrets: [s], ed25519: [] }).headers('msg_x', at, body)['webhook-signature']).toBe(new Webhook(s).sign('msg_x', at, body));
  });
});
