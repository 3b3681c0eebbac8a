import { base32Encode, hotp, matchTotp, otpauthUri, totpStep } from './totp';

// RFC 6238 Appendix B: the seeds are ASCII "12345678901234567890" repeated to the hash's size.
const SEED1 = Buffer.from('12345678901234567890');
const SEED256 = Buffer.from('12345678901234567890123456789012');
const SEED512 = Buffer.from('1234567890123456789012345678901234567890123456789012345678901234');

const VECTORS: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('matches the RFC test vectors at T=%i', (t, sha1, sha256, sha512) => {
    const step = totpStep(t * 1000);
    expect(hotp(SEED1, step, 8, 'sha1')).toBe(sha1);
    expect(hotp(SEED256, step, 8, 'sha256')).toBe(sha256);
    expect(hotp(SEED512, step, 8, 'sha512')).toBe(sha512);
    // The six digits we use are the last six of the eight.
    expect(hotp(SEED1, step)).toBe(sha1.slice(2));
  });

  it('accepts ±1 step, not ±2, and never a step at or before the last one used', () => {
    const at = 1_234_567_890_000;
    const now = totpStep(at);
    const code = (d: number) => hotp(SEED1, now + d);
    expect(matchTotp(SEED1, code(0), at, 0)).toBe(now);
    expect(matchTotp(SEED1, code(-1), at, 0)).toBe(now - 1);
    expect(matchTotp(SEED1, code(1), at, 0)).toBe(now + 1);
    expect(matchTotp(SEED1, code(2), at, 0)).toBeNull();
    expect(matchTotp(SEED1, code(-2), at, 0)).toBeNull();
    // Replay: the step was used.
    expect(matchTotp(SEED1, code(0), at, now)).toBeNull();
    expect(matchTotp(SEED1, code(-1), at, now - 1)).toBeNull();
    expect(matchTotp(SEED1, code(1), at, now)).toBe(now + 1);
    expect(matchTotp(SEED1, '12345', at, 0)).toBeNull();
    expect(matchTotp(SEED1, 'abcdef', at, 0)).toBeNull();
  });

  it('encodes base32 (RFC 4648 vectors, no padding) and the otpauth URI', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Encode(Buffer.from('f'))).toBe('MY');
    expect(base32Encode(SEED1)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(otpauthUri(SEED1, 'IAM', 'a@example.com')).toBe(
      'otpauth://totp/IAM:a%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=IAM&algorithm=SHA1&digits=6&period=30',
    );
  });
});
