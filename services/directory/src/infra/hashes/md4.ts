/**
 * MD4 (RFC 1320) and HMAC-MD4 (RFC 2104), for Kratos's `$hmac-md4$` imports only: OpenSSL 3 no
 * longer offers MD4 to node:crypto. Verify-only; never used to hash anything new.
 */
const rotl = (x: number, n: number): number => (x << n) | (x >>> (32 - n));

export function md4(msg: Buffer): Buffer {
  const bitLen = msg.length * 8;
  const padded = Buffer.alloc(((msg.length + 8) >> 6) * 64 + 64);
  msg.copy(padded);
  padded[msg.length] = 0x80;
  padded.writeUInt32LE(bitLen >>> 0, padded.length - 8);
  padded.writeUInt32LE(Math.floor(bitLen / 2 ** 32), padded.length - 4);
  let a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
  const x = new Array<number>(16);
  const F = (p: number, q: number, r: number) => (p & q) | (~p & r);
  const G = (p: number, q: number, r: number) => (p & q) | (p & r) | (q & r);
  const H = (p: number, q: number, r: number) => p ^ q ^ r;
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) x[i] = padded.readUInt32LE(off + i * 4);
    const [aa, bb, cc, dd] = [a, b, c, d];
    for (const i of [0, 4, 8, 12]) {
      a = rotl((a + F(b, c, d) + x[i]!) | 0, 3);
      d = rotl((d + F(a, b, c) + x[i + 1]!) | 0, 7);
      c = rotl((c + F(d, a, b) + x[i + 2]!) | 0, 11);
      b = rotl((b + F(c, d, a) + x[i + 3]!) | 0, 19);
    }
    for (const i of [0, 1, 2, 3]) {
      a = rotl((a + G(b, c, d) + x[i]! + 0x5a827999) | 0, 3);
      d = rotl((d + G(a, b, c) + x[i + 4]! + 0x5a827999) | 0, 5);
      c = rotl((c + G(d, a, b) + x[i + 8]! + 0x5a827999) | 0, 9);
      b = rotl((b + G(c, d, a) + x[i + 12]! + 0x5a827999) | 0, 13);
    }
    for (const i of [0, 2, 1, 3]) {
      a = rotl((a + H(b, c, d) + x[i]! + 0x6ed9eba1) | 0, 3);
      d = rotl((d + H(a, b, c) + x[i + 8]! + 0x6ed9eba1) | 0, 9);
      c = rotl((c + H(d, a, b) + x[i + 4]! + 0x6ed9eba1) | 0, 11);
      b = rotl((b + H(c, d, a) + x[i + 12]! + 0x6ed9eba1) | 0, 15);
    }
    a = (a + aa) | 0;
    b = (b + bb) | 0;
    c = (c + cc) | 0;
    d = (d + dd) | 0;
  }
  const out = Buffer.alloc(16);
  [a, b, c, d].forEach((v, i) => out.writeInt32LE(v, i * 4));
  return out;
}

export function hmacMd4(key: Buffer, msg: Buffer): Buffer {
  const k = Buffer.alloc(64);
  (key.length > 64 ? md4(key) : key).copy(k);
  const ipad = Buffer.from(k.map((v) => v ^ 0x36));
  const opad = Buffer.from(k.map((v) => v ^ 0x5c));
  return md4(Buffer.concat([opad, md4(Buffer.concat([ipad, msg]))]));
}
