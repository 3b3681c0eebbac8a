import { randomBytes } from 'node:crypto';
import { SIGN_IN_CHALLENGE_BYTES, checkSignInChallenge, issueSignInChallenge } from './sign-in-challenge';

describe('the passwordless sign-in challenge', () => {
  const key = randomBytes(32);
  const now = new Date('2026-11-27T10:00:00Z');
  const later = new Date(now.getTime() + 300_000);
  const b64 = (c: Uint8Array) => Buffer.from(c).toString('base64url');

  it('is checked by its MAC and its expiry, to the second', () => {
    const c = issueSignInChallenge(key, later);
    expect(c.length).toBe(SIGN_IN_CHALLENGE_BYTES);
    expect(checkSignInChallenge(key, b64(c), now)).toEqual(later);
    expect(checkSignInChallenge(key, b64(c), new Date(later.getTime() - 1))).toEqual(later);
    expect(checkSignInChallenge(key, b64(c), later)).toBeNull();
    expect(b64(issueSignInChallenge(key, later))).not.toBe(b64(c));
  });

  it('refuses another key, a changed expiry or nonce, another shape, and anything not base64url', () => {
    const c = Buffer.from(issueSignInChallenge(key, later));
    expect(checkSignInChallenge(randomBytes(32), c.toString('base64url'), now)).toBeNull();
    for (const at of [1, 8, 9, 24, 25, 40]) {
      const changed = Buffer.from(c);
      changed[at]! ^= 1;
      expect(checkSignInChallenge(key, changed.toString('base64url'), now)).toBeNull();
    }
    const version = Buffer.from(c);
    version[0] = 2;
    expect(checkSignInChallenge(key, version.toString('base64url'), now)).toBeNull();
    expect(checkSignInChallenge(key, c.subarray(0, -1).toString('base64url'), now)).toBeNull();
    expect(checkSignInChallenge(key, Buffer.concat([c, Buffer.from([0])]).toString('base64url'), now)).toBeNull();
    expect(checkSignInChallenge(key, `${c.toString('base64url')}=`, now)).toBeNull();
    expect(checkSignInChallenge(key, '', now)).toBeNull();
    expect(checkSignInChallenge(key, 'A'.repeat(100_000), now)).toBeNull();
    expect(checkSignInChallenge(key, randomBytes(SIGN_IN_CHALLENGE_BYTES).toString('base64url'), now)).toBeNull();
  });
});
