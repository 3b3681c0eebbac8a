/**
 * A software WebAuthn authenticator for tests (no browser): ES256 credentials, "none" attestation,
 * user presence and verification flags, a signature counter. It answers the JSON options the
 * server makes with the JSON responses a browser (@simplewebauthn/browser) would send.
 */
import { type KeyObject, createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

interface Credential {
  readonly id: Buffer;
  readonly privateKey: KeyObject;
  readonly cose: Uint8Array;
  readonly userHandle: string;
  counter: number;
}

const b64u = (b: Uint8Array | Buffer): string => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];

  /** `uv: false` answers without user verification; `backedUp` sets BE/BS (a synced passkey); `counter: false` keeps it at 0. */
  constructor(
    readonly origin: string,
    private readonly opts: { uv?: boolean; backedUp?: boolean; counter?: boolean } = {},
  ) {}

  private flags(attested: boolean): number {
    let f = 0x01; // UP
    if (this.opts.uv !== false) f |= 0x04;
    if (this.opts.backedUp) f |= 0x08 | 0x10;
    if (attested) f |= 0x40;
    return f;
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** navigator.credentials.create for `options` (PublicKeyCredentialCreationOptionsJSON). */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }): Record<string, unknown> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = randomBytes(16);
    const cred: Credential = { id, privateKey, cose, userHandle: options.user.id, counter: 0 };
    this.credentials.push(cred);
    const counter = Buffer.alloc(4);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    const authData = Buffer.concat([sha256(options.rp.id ?? new URL(this.origin).hostname), Buffer.from([this.flags(true)]), counter, Buffer.alloc(16), idLen, id, Buffer.from(cose)]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key',
      response: { clientDataJSON: b64u(this.clientData('webauthn.create', options.challenge)), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get for `options` with the credential `index` (default the last made). */
  get(options: { challenge: string; rpId?: string }, index = this.credentials.length - 1): Record<string, unknown> {
    const cred = this.credentials[index];
    if (!cred) throw new Error('no credential');
    if (this.opts.counter !== false) cred.counter++;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(cred.counter);
    const authData = Buffer.concat([sha256(options.rpId ?? new URL(this.origin).hostname), Buffer.from([this.flags(false)]), counter]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), cred.privateKey);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: cred.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
