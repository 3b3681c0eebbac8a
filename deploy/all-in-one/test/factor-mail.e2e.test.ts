/**
 * Second factors end to end against a real SMTP server (issue #34 items 2 and 6):
 * - every factor added is mailed to the user (an authenticator app from the account, a passkey, and
 *   one enrolled at sign-in under MFA_REQUIRED_ROLES), once each, with the account page's link, and
 *   audited (`factor.added`);
 * - a password reset removes the second factors and passkeys added in the 24 hours before it
 *   (AUTH_RESET_REMOVES_FACTORS_HOURS) and keeps older ones; its mail lists both, with the link;
 * - recovery codes carry at least 112 bits, are stored as keyed digests (not SHA-256 of
 *   "<user id>:<code>"), accept lower case, spaces and no dashes, and are single use.
 */
import { createHash } from 'node:crypto';
import { actionToken, eventually, freePort, type SmtpSink, startSmtpSink } from '@iam/platform/testing';
import { SoftAuthenticator } from '../../../services/identity/src/testing/soft-authenticator';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { totp } from './support/factors';

jest.setTimeout(120_000);

const BASE = 'https://app.example';


describe('factor mails, the reset review and recovery codes (end to end, real SMTP)', () => {
  let sys: TestSystem;
  let smtp: SmtpSink;
  let issuer: string;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(issuer, method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });
  const mailsTo = (email: string, subject: string) => smtp.mails.filter((m) => m.to.includes(email) && m.subject === subject);
  const ADDED = 'A sign-in method was added to your account';

  beforeAll(async () => {
    smtp = await startSmtpSink();
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer, SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: BASE, MFA_REQUIRED_ROLES: 'Vault' } });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token as string;
    expect((await call('POST', '/api/v1/roles', { token: admin, body: { name: 'Vault', description: 'must use a second factor' } })).status).toBe(201);
  });

  afterAll(async () => {
    await sys?.stop();
    await smtp?.close();
  });

  async function newUser(roles: string[] = []) {
    const email = uniqueEmail('fmail');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Mail', email, password, roles } });
    expect(r.status).toBe(201);
    return { id: r.json.id as string, email, password };
  }

  async function withTotp(u: { email: string; password: string }) {
    const token = (await login(u.email, u.password)).json.token as string;
    const secret = (await call('POST', '/api/v1/me/mfa/totp', { token })).json.secret as string;
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token, body: { code: totp(secret, -1) } })).status).toBe(204);
    return { token, secret };
  }

  async function addPasskey(token: string, name: string): Promise<string> {
    const options = await call('POST', '/api/v1/me/passkeys/options', { token });
    const r = await call('POST', '/api/v1/me/passkeys', { token, body: { name, response: new SoftAuthenticator(issuer).create(options.json as never) } });
    expect(r.status).toBe(201);
    return r.json.id as string;
  }

  it('every factor added is mailed to the user, once, with the account page; and audited', async () => {
    const u = await newUser();
    const { token } = await withTotp(u);
    const app = await smtp.waitFor((m) => m.to.includes(u.email) && m.subject === ADDED);
    expect(app.text).toContain('An authenticator app (added ');
    expect(app.text).toContain(`reset your password and review your sign-in methods at ${BASE}/account`);
    expect(app.text).toContain(`href="${BASE}/account"`);
    await addPasskey(token, 'Laptop');
    await smtp.waitFor((m) => m.to.includes(u.email) && m.subject === ADDED && m.text.includes('A passkey "Laptop" (added '));
    // Enrolled at sign-in (MFA_REQUIRED_ROLES): mailed too.
    const v = await newUser(['Vault']);
    const first = await login(v.email, v.password);
    expect(first.json.type).toBe('urn:iam:problem:mfa-enrolment-required');
    const en = await call('POST', '/api/v1/auth/mfa/enrol', { body: { mfaToken: first.json.mfaToken } });
    expect((await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: first.json.mfaToken, code: totp(en.json.secret as string) } })).status).toBe(200);
    await smtp.waitFor((m) => m.to.includes(v.email) && m.subject === ADDED && m.text.includes('An authenticator app'));

    // Once each (one delivery record per event), and in the trail.
    await new Promise((r) => setTimeout(r, 500));
    expect(mailsTo(u.email, ADDED)).toHaveLength(2);
    expect(mailsTo(v.email, ADDED)).toHaveLength(1);
    const records = await sys.notification.dataSource.query<Array<{ status: string }>>(`SELECT status FROM deliveries WHERE kind = 'factor_added' AND recipient = $1`, [u.email.toLowerCase()]);
    expect(records.map((r) => r.status)).toEqual(['sent', 'sent']);
    const trail = await eventually(async () => {
      const r = await call('GET', `/api/v1/audit-events?targetId=${u.id}&action=factor.added`, { token: admin });
      return r.json.items.length === 2 ? (r.json.items as Array<{ changes: Array<{ field: string; after?: unknown }> }>) : undefined;
    }, 10_000, 100);
    expect(trail.flatMap((e) => e.changes.map((c) => `${c.field}=${String(c.after)}`)).sort()).toEqual(['kind=passkey', 'kind=totp', 'name=Laptop']);
  });

  it('a reset removes the passkey added an hour ago and keeps one added earlier (and the older authenticator app); the mail lists both', async () => {
    const u = await newUser();
    const { token, secret } = await withTotp(u);
    const older = await addPasskey(token, 'Desk key');
    const recent = await addPasskey(token, 'Strange key');
    const db = sys.identity.dataSource;
    await db.query(`UPDATE passkeys SET created_at = now() - interval '2 days' WHERE id = $1`, [older]);
    await db.query(`UPDATE passkeys SET created_at = now() - interval '1 hour' WHERE id = $1`, [recent]);
    await db.query(`UPDATE mfa_totp SET activated_at = now() - interval '3 days' WHERE user_id = $1`, [u.id]);

    const mark = smtp.mails.length;
    expect((await call('POST', '/api/v1/auth/password-reset/request', { body: { email: u.email } })).status).toBe(202);
    const resetMail = await smtp.waitFor((m) => m.to.includes(u.email) && smtp.mails.indexOf(m) >= mark && actionToken(m, 'reset-password') !== undefined);
    const next = strongPassword();
    expect((await call('POST', '/api/v1/auth/password-reset/confirm', { body: { token: actionToken(resetMail, 'reset-password'), newPassword: next } })).status).toBe(204);

    // Done by the 204: the recent passkey is gone, the older one and the app stay.
    expect((await db.query<Array<{ name: string }>>('SELECT name FROM passkeys WHERE user_id = $1', [u.id])).map((p) => p.name)).toEqual(['Desk key']);
    const l = await login(u.email, next);
    expect(l.json).toMatchObject({ type: 'urn:iam:problem:mfa-required', methods: ['totp', 'webauthn'] });
    expect((await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: l.json.mfaToken, code: totp(secret) } })).status).toBe(200);

    const notice = await smtp.waitFor((m) => m.to.includes(u.email) && m.subject === 'Your password was changed');
    const removedPart = notice.text.slice(notice.text.indexOf('the reset removed'), notice.text.indexOf('still has'));
    expect(removedPart).toContain('in the 24 hours before it: a passkey "Strange key" (added ');
    expect(removedPart).not.toContain('Desk key');
    expect(notice.text).toMatch(/still has: an authenticator app \(added [^)]+\); a passkey "Desk key" \(added [^)]+\)\./);
    expect(notice.text).toContain(`href="${BASE}/account"`);
    // The removal is audited with its reason.
    const removed = await db.query<Array<{ payload: Buffer }>>(`SELECT payload FROM outbox_events WHERE subject = 'identity.mfa.removed'`);
    expect(removed.filter((r) => r.payload.toString('latin1').includes(u.id) && r.payload.toString('latin1').includes('password reset'))).toHaveLength(1);
  });

  it('recovery codes: at least 112 bits each, stored as keyed digests, typed loosely, single use', async () => {
    const u = await newUser();
    const { token } = await withTotp(u);
    const r = await call('POST', '/api/v1/me/mfa/recovery-codes', { token });
    expect(r.status).toBe(200);
    const codes = r.json.codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) {
      expect(c).toMatch(/^[A-HJ-NP-Z2-9]{4}(-[A-HJ-NP-Z2-9]{4}){5}$/);
      // 32 letters: log2(32) = 5 bits a character.
      expect(c.replace(/-/g, '').length * Math.log2(32)).toBeGreaterThanOrEqual(112);
    }
    // No stored row is the unkeyed SHA-256 of "<user id>:<code>" (what a database copy could test offline).
    const rows = await sys.identity.dataSource.query<Array<{ code_hash: Buffer; scheme: string }>>('SELECT code_hash, scheme FROM mfa_recovery_codes WHERE user_id = $1', [u.id]);
    expect(rows).toHaveLength(10);
    const unkeyed = new Set(codes.map((c) => createHash('sha256').update(`${u.id}:${c.replace(/-/g, '')}`).digest('hex')));
    expect(rows.filter((row) => unkeyed.has(row.code_hash.toString('hex')))).toEqual([]);
    expect(rows.map((row) => row.scheme)).toEqual(Array(10).fill('hmac'));

    // Lower case, spaces for dashes: accepted once.
    const typed = codes[3]!.toLowerCase().replace(/-/g, ' ');
    const l1 = await login(u.email, u.password);
    expect((await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: l1.json.mfaToken, recoveryCode: typed } })).status).toBe(200);
    const l2 = await login(u.email, u.password);
    expect((await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: l2.json.mfaToken, recoveryCode: codes[3] } })).status).toBe(401);
    expect((await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: l2.json.mfaToken, recoveryCode: codes[4]!.replace(/-/g, '') } })).status).toBe(200);
  });
});
