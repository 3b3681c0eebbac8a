/**
 * The importers' fixture exports (Keycloak realm, Auth0, Firebase, generic CSV) converted and
 * imported against the real PostgreSQL: every user with a password signs in with it, no reset;
 * what cannot be carried is said (a user without email, a Keycloak OTP credential).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { directoryFixture } from '../testing/app-fixture';
import { base32Encode } from '@iam/platform';
import { type Converted, fromAuth0, fromCsv, fromFirebase, fromKeycloak } from './index';
import { keycloakTotp } from './keycloak';

const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name), 'utf8');

describe('importers: a fixture export of each kind signs its users in with no reset', () => {
  const fx = directoryFixture('directory_importers');

  async function importAndSignIn(converted: Iterable<Converted>, passwords: Record<string, string>) {
    const all = [...converted];
    const users = all.flatMap((c) => ('user' in c ? [c.user] : []));
    const results = await fx.uc.imports.importBatch(fx.admin, randomUUID(), users.map((u, i) => ({ line: i + 1, text: JSON.stringify(u) })));
    expect(results.map((r) => r.status)).toEqual(users.map(() => 'created'));
    for (const [email, password] of Object.entries(passwords)) {
      expect({ email, ok: (await fx.uc.credentials.verify(email, password)).principal?.email }).toEqual({ email, ok: email });
      expect((await fx.uc.credentials.verify(email, password)).principal?.email).toBe(email);
    }
    return all;
  }

  it('Keycloak realm export: PBKDF2-SHA256 and Argon2 credentials; UPDATE_PASSWORD kept; the TOTP secret carried; users without email said', async () => {
    const all = await importAndSignIn(fromKeycloak(JSON.parse(fixture('keycloak-realm.json'))), {
      'kc.pbkdf2@acme.example': 'Keycloak-Pass-1',
      'kc.argon@acme.example': 'Keycloak-Argon-2',
    });
    expect(all).toEqual([
      {
        user: expect.objectContaining({
          firstName: 'Kay',
          lastName: 'Pbkdf',
          externalId: '5b6e7c1a-2f1e-4a53-9d55-0c0a6f6f0a01',
          emailVerified: true,
          // Keycloak's key is the secret's UTF-8 bytes; authenticator apps got their base32.
          totp: { secret: base32Encode(Buffer.from('JBSWY3DPEHPK3PXP')), algorithm: 'SHA1', digits: 6, period: 30 },
        }),
      },
      { user: expect.objectContaining({ firstName: 'kc.argon', lastName: '-', passwordChangeRequired: true }) },
      { skip: 'user service-account-x has no email' },
    ]);
    expect(all[0]).not.toHaveProperty('user.roles');
  });

  it('Keycloak OTP credentials: BASE32-encoded secrets decoded; HOTP and parameters the verifier cannot check are not carried, and said', () => {
    const otp = (credentialData: Record<string, unknown>, value = 'JBSWY3DPEHPK3PXP') => ({ type: 'otp', secretData: JSON.stringify({ value }), credentialData: JSON.stringify(credentialData) });
    expect(keycloakTotp(otp({ subType: 'totp', digits: 6, period: 30, algorithm: 'HmacSHA1', secretEncoding: 'BASE32' }))).toEqual({ secret: 'JBSWY3DPEHPK3PXP', algorithm: 'SHA1', digits: 6, period: 30 });
    expect(keycloakTotp(otp({ subType: 'hotp', digits: 6, counter: 3, algorithm: 'HmacSHA1' }))).toEqual({ error: expect.stringMatching(/type "hotp" was not carried/) });
    expect(keycloakTotp(otp({ subType: 'totp', digits: 8, period: 30, algorithm: 'HmacSHA256' }))).toEqual({ error: expect.stringMatching(/SHA256, 8 digits, 30 s was not carried/) });
    const [converted] = [...fromKeycloak({ users: [{ email: 'h@acme.example', credentials: [otp({ subType: 'hotp' })] }] })];
    expect(converted).toEqual({ user: expect.not.objectContaining({ totp: expect.anything() }), warnings: [expect.stringMatching(/^h@acme.example: an OTP credential of type "hotp"/)] });
  });

  it('Auth0 export: bcrypt hashes; a social-only user comes in without a password', async () => {
    const all = await importAndSignIn(fixture('auth0-export.ndjson').trim().split('\n').map((l) => fromAuth0(JSON.parse(l))), {
      'a0.one@acme.example': 'password',
      'a0.two@acme.example': 'password',
    });
    expect(all[1]).toEqual({ user: expect.objectContaining({ firstName: 'Bob', lastName: 'Auth', externalId: 'auth0|60425da93519d90068f82967' }) });
    expect(all[2]).toEqual({ user: { firstName: 'Social', lastName: 'Only', email: 'a0.social@acme.example', externalId: 'google-oauth2|1234', emailVerified: true } });
  });

  it("Firebase export with the project's hash parameters: the modified scrypt", async () => {
    const all = await importAndSignIn(fromFirebase(JSON.parse(fixture('firebase-export.json')), JSON.parse(fixture('firebase-hash-config.json'))), { 'fb.user@acme.example': 'user1password' });
    expect(all[1]).toEqual({ skip: 'user phoneOnly has no email' });
  });

  it('generic CSV: quoted fields, a crypt string, a salted SHA given in parts', async () => {
    const all = await importAndSignIn(fromCsv(fixture('users.csv')), { 'csv.crypt@acme.example': 'Hello world!', 'csv.salted@acme.example': 'test' });
    expect(all.map((c) => ('user' in c ? [c.user.firstName, c.user.lastName] : []))).toEqual([['Cee, Sv', 'Crypt'], ['Salt', 'Ed "Sha"']]);
  });
});
