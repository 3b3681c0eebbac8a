/**
 * identity's passkey settings (issue #44 item 7): the RP ID is PUBLIC_URL's host unless
 * WEBAUTHN_RP_ID names it or a parent domain; WEBAUTHN_ORIGINS adds origins on the RP ID or below;
 * anything a ceremony could never verify under stops the start, naming the variable. The keys of
 * a rotation (item 6): OIDC_COOKIE_KEY as a list, JWT_KEY_ENCRYPTION_KEY_PREVIOUS.
 */
import { randomBytes } from 'node:crypto';
import { ConfigError, readConfig } from '@iam/platform';
import { derivedCookieKey, readIdentityConfig } from './config';

const base = { JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'), EMAIL_ACTION_KEY: randomBytes(32).toString('base64'), IDENTITY_DATABASE_URL: 'postgres://x@127.0.0.1/identity' };
const webauthn = (env: Record<string, string>) => readConfig({ ...base, ...env }, (e) => readIdentityConfig(e)).webauthn;
const problems = (env: Record<string, string>): string[] => {
  try {
    webauthn(env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
};

describe('WebAuthn RP ID and origins', () => {
  it('default: PUBLIC_URL\'s host and origin', () => {
    expect(webauthn({ PUBLIC_URL: 'https://iam.example.com' })).toEqual({ rpId: 'iam.example.com', origins: ['https://iam.example.com'] });
    expect(webauthn({})).toEqual({ rpId: 'localhost', origins: ['http://localhost:8080'] });
  });

  it('a parent domain as RP ID, and extra origins below it (sibling hosts share passkeys)', () => {
    expect(webauthn({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'Example.com', WEBAUTHN_ORIGINS: 'https://shop.example.com, https://example.com:8443' })).toEqual({
      rpId: 'example.com',
      origins: ['https://iam.example.com', 'https://shop.example.com', 'https://example.com:8443'],
    });
  });

  it('refuses an RP ID PUBLIC_URL is not under, one that is not a domain, and origins outside the RP ID or not https', () => {
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'other.com' })).toEqual([expect.stringMatching(/^WEBAUTHN_RP_ID: must be PUBLIC_URL's host \(iam.example.com\) or a domain it is under/)]);
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'ample.com' })).toHaveLength(1);
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'com' })).toEqual([expect.stringMatching(/^WEBAUTHN_RP_ID: "com" is a top-level domain/)]);
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'https://example.com' })).toEqual([expect.stringMatching(/^WEBAUTHN_RP_ID: .* is not a domain name/)]);
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_ORIGINS: 'https://evil.example' })).toEqual([expect.stringMatching(/^WEBAUTHN_ORIGINS: "https:\/\/evil.example" is not on the RP ID/)]);
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'http://shop.example.com' })).toEqual([expect.stringMatching(/is not an https origin/)]);
    expect(problems({ PUBLIC_URL: 'https://iam.example.com', WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://shop.example.com/path' })).toEqual([expect.stringMatching(/is not an https origin/)]);
  });
});

describe('key rotation settings', () => {
  const read = (env: Record<string, string>) => readConfig({ ...base, ...env }, (e) => readIdentityConfig(e));
  const k = () => randomBytes(32);

  it('OIDC_COOKIE_KEY is a list: the first signs, every one verifies (the provider takes them in order)', () => {
    const [a, b] = [k(), k()];
    expect(read({ OIDC_COOKIE_KEY: `${a.toString('base64')}, ${b.toString('base64')}` }).op.cookieKeys).toEqual([a, b]);
    expect(() => read({ OIDC_COOKIE_KEY: `${a.toString('base64')},short` })).toThrow(/OIDC_COOKIE_KEY: key 2 is not the base64 of 32 bytes/);
  });

  it('JWT_KEY_ENCRYPTION_KEY_PREVIOUS: the old keys (the current one left out); the derived cookie keys of both verify, the current one\'s signs', () => {
    const [old1, old2] = [k(), k()];
    const c = read({ JWT_KEY_ENCRYPTION_KEY_PREVIOUS: `${old1.toString('base64')},${old2.toString('base64')},${base.JWT_KEY_ENCRYPTION_KEY}` });
    expect(c.jwt.previousKeyEncryptionKeys).toEqual([old1, old2]);
    expect(c.op.cookieKeys).toEqual([derivedCookieKey(Buffer.from(base.JWT_KEY_ENCRYPTION_KEY, 'base64')), derivedCookieKey(old1), derivedCookieKey(old2)]);
    expect(read({}).jwt.previousKeyEncryptionKeys).toEqual([]);
    expect(() => read({ JWT_KEY_ENCRYPTION_KEY_PREVIOUS: 'not-a-key' })).toThrow(/JWT_KEY_ENCRYPTION_KEY_PREVIOUS: key 1/);
  });
});
