import { qrModules } from './qr';

describe('QR codes', () => {
  it('draws the modules of a version that holds the text, inside a 4-module quiet zone', () => {
    const { size, path } = qrModules('otpauth://totp/IAM:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=IAM');
    // Version 5 (37 modules) for this length at level M, plus 8 for the quiet zone.
    expect(size).toBe(45);
    expect(path).toMatch(/^(M\d+,\d+h1v1h-1z)+$/);
    expect(path.startsWith('M4,4h1v1h-1z')).toBe(true);
  });
});
