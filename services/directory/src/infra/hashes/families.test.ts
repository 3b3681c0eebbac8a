import { HashRefused, parseHash } from './families';
import { MALFORMED, VECTORS } from './vectors';

const pw = (s: string) => Buffer.from(s, 'utf8');

// SHA-crypt at 656,000 rounds and bcrypt at cost 12 take seconds each on a loaded machine.
jest.setTimeout(120_000);

describe('legacy hash families (Kratos and passwap vectors)', () => {
  it.each(VECTORS.map((v) => [v.family, v.source, v.hash, v.password] as const))('%s (%s) %s verifies with the right password only', async (family, _source, hash, password) => {
    const parsed = parseHash(hash);
    expect(parsed.family).toBe(family);
    await expect(parsed.verify(pw(password))).resolves.toBe(true);
    await expect(parsed.verify(pw(`${password}x`))).resolves.toBe(false);
  });

  it.each(MALFORMED.map((h) => [h]))('refuses %j at import with a reason', (hash) => {
    expect(() => parseHash(hash)).toThrow(HashRefused);
  });

  it('names the limit an absurd cost exceeds', () => {
    expect(() => parseHash('$2a$31$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6')).toThrow(/bcrypt cost 31 is above the limit/);
    expect(() => parseHash('$pbkdf2-sha256$i=1000000000,l=32$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI')).toThrow(/iterations 1000000000 is above the limit/);
  });

  it('a hash whose checksum is one character off does not verify', async () => {
    for (const hash of [
      '$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL7',
      '$argon2id$v=19$m=32,t=5,p=4$cm94YnRVOW5jZzFzcVE4bQ$fBxypOL0nP/zdPE71JtAV71i487LbX3fJI5PoTN6Lo4',
      '$scrypt$ln=16384,r=8,p=1$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=',
      // Kratos: another salt, the same checksum.
      '$pbkdf2-sha256$i=100000,l=32$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXcc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI',
    ]) {
      await expect(parseHash(hash).verify(pw(hash.includes('VxXcc') ? 'test' : 'tesu'))).resolves.toBe(false);
    }
  });

  it('marks the MD5/SHA-1-era families weak', () => {
    expect(parseHash('$md5$CY9rzUYh03PK3k6DJie09g==').weak).toBe(true);
    expect(parseHash('{SSHA}JFZFs0oHzxbMwkSJmYVeI8MnTDy/276a').weak).toBe(true);
    expect(parseHash('$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6').weak).toBe(false);
  });
});
