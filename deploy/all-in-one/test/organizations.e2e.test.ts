/**
 * Organizations end to end (issue #41): an org admin invites, the mail goes out through
 * notification (SMTP), the invitee signs in and accepts (single use, only as the invited
 * address), a re-invite of a pending address re-sends the same invitation; the collection rules
 * (cursor range-checked, bad slugs 400); every change in the audit trail.
 */
import { randomUUID } from 'node:crypto';
import { type SmtpSink, eventually, startSmtpSink } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, signedIn, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(180_000);

const invitationToken = (text: string): string | undefined => {
  const m = /\/account\?invitation=([A-Za-z0-9_%.~-]+)/.exec(text);
  return m ? decodeURIComponent(m[1]!) : undefined;
};

describe('organizations (end to end)', () => {
  let sys: TestSystem;
  let smtp: SmtpSink;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);

  async function user(): Promise<{ id: string; email: string; password: string }> {
    const email = uniqueEmail('org');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Org', lastName: 'Person', email, password } });
    expect(r.status).toBe(201);
    return { id: r.json.id, email, password };
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sys = await startTestSystem({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: 'https://app.example' } });
    admin = (await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
    await smtp?.close();
  });

  it('the org admin invites; the mail carries a single-use link; only the invited address accepts; a re-invite re-sends', async () => {
    const slug = `acme-${randomUUID().slice(0, 8)}`;
    const org = await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'Acme', slug } });
    expect(org.status).toBe(201);
    expect(org.headers.get('location')).toBe(`/api/v1/organizations/${org.json.id}`);
    const orgAdmin = await user();
    expect((await call('POST', `/api/v1/organizations/${org.json.id}/members`, { token: admin, body: { userId: orgAdmin.id, roles: ['org.admin'] } })).status).toBe(201);
    const adminToken = (await signedIn(sys.url(), orgAdmin.email, orgAdmin.password)).token;

    const invitee = await user();
    const sent = await call('POST', `/api/v1/organizations/${org.json.id}/invitations`, { token: adminToken, body: { email: invitee.email, roles: [] } });
    expect(sent.status).toBe(201);
    const first = await smtp.waitFor((m) => m.to.includes(invitee.email) && invitationToken(m.text) !== undefined);
    expect(first.text).toContain('Acme');
    // Sent again: the same invitation, a new link; the first link is dead.
    const again = await call('POST', `/api/v1/organizations/${org.json.id}/invitations`, { token: adminToken, body: { email: invitee.email, roles: [] } });
    expect(again.json.id).toBe(sent.json.id);
    const second = await smtp.waitFor((m) => m.to.includes(invitee.email) && invitationToken(m.text) !== undefined && invitationToken(m.text) !== invitationToken(first.text));
    const listed = await call('GET', `/api/v1/organizations/${org.json.id}/invitations`, { token: adminToken });
    expect(listed.json.totalCount).toBe(1);

    const inviteeToken = (await signedIn(sys.url(), invitee.email, invitee.password)).token;
    const other = await user();
    const otherToken = (await signedIn(sys.url(), other.email, other.password)).token;
    const token = invitationToken(second.text)!;
    expect((await call('POST', '/api/v1/invitations/accept', { token: inviteeToken, body: { token: invitationToken(first.text) } })).status).toBe(400);
    expect((await call('POST', '/api/v1/invitations/accept', { token: otherToken, body: { token } })).status).toBe(400);
    const accepted = await call('POST', '/api/v1/invitations/accept', { token: inviteeToken, body: { token } });
    expect(accepted.json).toEqual({ organizationId: org.json.id, roles: [] });
    expect((await call('POST', '/api/v1/invitations/accept', { token: inviteeToken, body: { token } })).status).toBe(400);
    expect((await call('POST', `/api/v1/organizations/${org.json.id}/invitations`, { token: adminToken, body: { email: invitee.email } })).status).toBe(409);

    // The audit trail has the organization, the membership and the invitation.
    await eventually(async () => {
      const r = await call('GET', `/api/v1/audit-events?targetId=${org.json.id}&pageSize=100`, { token: admin });
      const actions = (r.json.items as Array<{ action: string }>).map((e) => e.action);
      return ['organization.created', 'organization.membership.updated', 'organization.invitation.sent', 'organization.invitation.resent'].every((a) => actions.includes(a));
    }, 30_000);
  });

  it('collection rules: bad slugs and NUL are 400s naming the field; a cursor is range-checked and bound to its organization', async () => {
    for (const slug of ['p\u0430ypal', 'a\u0000b', 'UPPER', 'a\u202eb']) {
      const r = await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'X', slug } });
      expect({ slug, status: r.status }).toEqual({ slug, status: 400 });
    }
    const [a, b] = [
      (await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'A', slug: `a-${randomUUID().slice(0, 8)}` } })).json.id,
      (await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'B', slug: `b-${randomUUID().slice(0, 8)}` } })).json.id,
    ];
    for (let i = 0; i < 3; i++) {
      const u = await user();
      await call('POST', `/api/v1/organizations/${a}/members`, { token: admin, body: { userId: u.id } });
    }
    const page = await call('GET', `/api/v1/organizations/${a}/members?pageSize=2`, { token: admin });
    expect(page.json).toMatchObject({ totalCount: 3, totalCountExact: true });
    const next = await call('GET', `/api/v1/organizations/${a}/members?pageSize=2&cursor=${page.json.nextCursor}`, { token: admin });
    expect(next.json.items).toHaveLength(1);
    expect((await call('GET', `/api/v1/organizations/${b}/members?pageSize=2&cursor=${page.json.nextCursor}`, { token: admin })).status).toBe(400);
    expect((await call('GET', `/api/v1/organizations/${a}/members?cursor=garbage.AAAAAAAAAAAAAAAAAAAAAA`, { token: admin })).status).toBe(400);
    expect((await call('GET', `/api/v1/organizations/${a}/members?page=2&cursor=${page.json.nextCursor}`, { token: admin })).status).toBe(400);
    expect((await call('GET', `/api/v1/organizations/${a}/members?pageSize=101`, { token: admin })).status).toBe(400);
    expect((await call('GET', `/api/v1/organizations/${a}/members?page_size=2`, { token: admin })).status).toBe(400);
  });
});
