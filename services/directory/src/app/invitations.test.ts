/**
 * Invitations on the real PostgreSQL: single use, bound to the invited email, expiring, a
 * pending one sent again (not duplicated), a member not invited again, an org admin offering
 * only roles it holds; and domains through a stub resolver: every state, consumer domains
 * refused, just-in-time membership only with a verified email on a verified domain.
 */
import { SUBJECTS } from '@iam/contracts';
import { open } from '@iam/platform';
import { INVITATION_SEAL_KEY, PASSWORD, directoryFixture, refusal, unique } from '../testing/app-fixture';
import { DOMAIN_VERIFY_WINDOW_MS, challengeName } from './domains';

const fx = directoryFixture('directory_invitations');

async function newUser(domain = 'example.com'): Promise<{ userId: string; email: string }> {
  const email = `i-${unique()}@${domain}`;
  const u = await fx.uc.users.create(fx.admin, { firstName: 'In', lastName: 'Vitee', email, password: PASSWORD });
  return { userId: u.id, email };
}

/** The raw token of the last invitation mail event (opened as notification opens it). */
async function lastToken(): Promise<string> {
  const sent = (await fx.ds.query<Array<{ id: string; subject: string }>>(`SELECT id, subject FROM outbox_events WHERE subject = $1 ORDER BY occurred_at DESC LIMIT 1`, [SUBJECTS.organizationInvitationSent]))[0]!;
  const events = await fx.newEvents();
  const e = events.filter((x) => x.subject === SUBJECTS.organizationInvitationSent).pop()!;
  return open(INVITATION_SEAL_KEY, Buffer.from(e.payload.sealedToken as string, 'base64url'), sent.id).toString();
}

describe('organization invitations', () => {
  it('single use, bound to the invited email; a pending invitation is sent again, not duplicated; a member is not invited', async () => {
    const o = await fx.uc.organizations.create(fx.admin, { name: 'Inv', slug: `inv-${unique()}` });
    const invitee = await newUser();
    const other = await newUser();
    const first = await fx.uc.invitations.invite(fx.admin, o.id, { email: invitee.email.toUpperCase(), roles: ['org.admin'] });
    expect(first).toMatchObject({ email: invitee.email, status: 'pending', roles: ['org.admin'] });
    const staleToken = await lastToken();
    const again = await fx.uc.invitations.invite(fx.admin, o.id, { email: invitee.email, roles: [] });
    expect(again.id).toBe(first.id);
    const token = await lastToken();
    expect(token).not.toBe(staleToken);
    expect((await fx.uc.invitations.list(fx.admin, o.id, { pageSize: 10 })).items).toHaveLength(1);

    // The re-sent invitation's old token is dead; another address cannot use the new one.
    expect(await refusal(fx.uc.invitations.accept(invitee, staleToken))).toEqual({ code: 'VALIDATION', fields: ['token'] });
    expect(await refusal(fx.uc.invitations.accept(other, token))).toEqual({ code: 'VALIDATION', fields: ['token'] });
    expect(await fx.uc.invitations.accept(invitee, token)).toEqual({ organizationId: o.id, roles: [] });
    const joined = (await fx.newEvents()).find((e) => e.subject === SUBJECTS.organizationMembershipUpdated);
    expect(joined?.payload).toMatchObject({ userId: invitee.userId, memberAfter: true, via: 'invitation' });
    expect(await refusal(fx.uc.invitations.accept(invitee, token))).toEqual({ code: 'VALIDATION', fields: ['token'] });
    expect((await fx.uc.invitations.get(fx.admin, o.id, first.id)).status).toBe('accepted');
    // Now a member: inviting again is a 409.
    expect(await refusal(fx.uc.invitations.invite(fx.admin, o.id, { email: invitee.email, roles: [] }))).toEqual({ code: 'CONFLICT', fields: ['email'] });
  });

  it('expired and revoked invitations cannot be accepted; a malformed token is the same 400', async () => {
    const o = await fx.uc.organizations.create(fx.admin, { name: 'Inv', slug: `inv-${unique()}` });
    const invitee = await newUser();
    const inv = await fx.uc.invitations.invite(fx.admin, o.id, { email: invitee.email, roles: [] });
    const token = await lastToken();
    await fx.ds.query(`UPDATE organization_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [inv.id]);
    expect((await fx.uc.invitations.get(fx.admin, o.id, inv.id)).status).toBe('expired');
    expect(await refusal(fx.uc.invitations.accept(invitee, token))).toEqual({ code: 'VALIDATION', fields: ['token'] });
    // Sent again: valid for seven more days.
    await fx.uc.invitations.invite(fx.admin, o.id, { email: invitee.email, roles: [] });
    const renewed = await lastToken();
    await fx.uc.invitations.revoke(fx.admin, o.id, inv.id);
    expect(await refusal(fx.uc.invitations.accept(invitee, renewed))).toEqual({ code: 'VALIDATION', fields: ['token'] });
    expect(await refusal(fx.uc.invitations.accept(invitee, 'x\u0000y'))).toEqual({ code: 'VALIDATION', fields: ['token'] });
  });

  it('an org admin invites into its organization only, offering only roles whose permissions it holds there', async () => {
    const [a, b] = [await fx.uc.organizations.create(fx.admin, { name: 'A', slug: `a-${unique()}` }), await fx.uc.organizations.create(fx.admin, { name: 'B', slug: `b-${unique()}` })];
    const orgAdmin = await newUser();
    await fx.uc.organizations.addMember(fx.admin, a.id, { userId: orgAdmin.userId, roles: ['org.admin'] });
    const strong = await fx.uc.organizationRoles.create(fx.admin, { name: `strong-${unique()}`, permissions: ['users.manage'] });
    await fx.uc.invitations.invite(orgAdmin, a.id, { email: `x-${unique()}@example.com`, roles: ['org.admin'] });
    expect((await refusal(fx.uc.invitations.invite(orgAdmin, a.id, { email: `x-${unique()}@example.com`, roles: [strong.name] }))).code).toBe('FORBIDDEN');
    expect((await refusal(fx.uc.invitations.invite(orgAdmin, b.id, { email: `x-${unique()}@example.com`, roles: [] }))).code).toBe('NOT_FOUND');
    expect(await refusal(fx.uc.invitations.invite(orgAdmin, a.id, { email: 'not-an-email', roles: [] }))).toEqual({ code: 'VALIDATION', fields: ['email'] });
  });
});

describe('organization domains', () => {
  it('pending → verified through DNS TXT; a failed lookup changes nothing; no record past the window → failed', async () => {
    const o = await fx.uc.organizations.create(fx.admin, { name: 'D', slug: `d-${unique()}` });
    const name = `corp-${unique()}.example`;
    const d = await fx.uc.domains.claim(fx.admin, o.id, name.toUpperCase());
    expect(d).toMatchObject({ domain: name, status: 'pending' });
    expect((await fx.uc.domains.verify(fx.admin, o.id, d.id)).status).toBe('pending');
    fx.resolver.failing.add(challengeName(name));
    expect((await fx.uc.domains.verify(fx.admin, o.id, d.id)).status).toBe('pending');
    fx.resolver.failing.delete(challengeName(name));
    fx.resolver.records.set(challengeName(name), ['unrelated', d.challenge]);
    expect((await fx.uc.domains.verify(fx.admin, o.id, d.id)).status).toBe('verified');
    const events = (await fx.newEvents()).filter((e) => e.subject.startsWith('directory.organization.domain'));
    expect(events.map((e) => [e.subject, e.payload.status])).toEqual([
      [SUBJECTS.organizationDomainAdded, 'pending'],
      [SUBJECTS.organizationDomainUpdated, 'verified'],
    ]);
    // Another organization cannot verify the same domain.
    const other = await fx.uc.organizations.create(fx.admin, { name: 'D2', slug: `d2-${unique()}` });
    const d2 = await fx.uc.domains.claim(fx.admin, other.id, name);
    fx.resolver.records.set(challengeName(name), [d.challenge, d2.challenge]);
    expect((await refusal(fx.uc.domains.verify(fx.admin, other.id, d2.id))).code).toBe('CONFLICT');
    // The record removed: the periodic re-check fails the verified domain.
    fx.resolver.records.delete(challengeName(name));
    await fx.ds.query(`UPDATE organization_domains SET checked_at = now() - interval '2 hours'`);
    await fx.uc.domains.recheck(1000);
    expect((await fx.uc.domains.get(fx.admin, o.id, d.id)).status).toBe('failed');
    // A pending claim past the window with no record: failed.
    const late = await fx.uc.domains.claim(fx.admin, o.id, `late-${unique()}.example`);
    await fx.ds.query(`UPDATE organization_domains SET created_at = now() - $2 * interval '1 millisecond' WHERE id = $1`, [late.id, DOMAIN_VERIFY_WINDOW_MS + 1000]);
    expect((await fx.uc.domains.verify(fx.admin, o.id, late.id)).status).toBe('failed');
  });

  it('consumer domains and malformed names are refused; domains are the platform\'s, not an org admin\'s', async () => {
    const o = await fx.uc.organizations.create(fx.admin, { name: 'D', slug: `d-${unique()}` });
    for (const bad of ['gmail.com', 'Outlook.com', 'localhost', 'a..b', 'exa mple.com', 'ex\u0000ample.com', '1.2.3.4']) {
      expect(await refusal(fx.uc.domains.claim(fx.admin, o.id, bad))).toEqual({ code: 'VALIDATION', fields: ['domain'] });
    }
    const orgAdmin = await newUser();
    await fx.uc.organizations.addMember(fx.admin, o.id, { userId: orgAdmin.userId, roles: ['org.admin'] });
    expect((await refusal(fx.uc.domains.claim(orgAdmin, o.id, `x-${unique()}.example`))).code).toBe('FORBIDDEN');
  });

  it('just in time: a verified email on a verified domain joins with the JIT roles when allowed; an unverified one never', async () => {
    const o = await fx.uc.organizations.create(fx.admin, { name: 'J', slug: `j-${unique()}` });
    const name = `jit-${unique()}.example`;
    const d = await fx.uc.domains.claim(fx.admin, o.id, name);
    const verified = await newUser(name);
    const unverified = await newUser(name);
    await fx.ds.query('UPDATE users SET email_verified = true WHERE id = $1', [verified.userId]);
    // Not verified yet, and not allowed yet: nobody joins.
    expect(await fx.uc.domains.joinByDomain(verified.userId)).toEqual([]);
    fx.resolver.records.set(challengeName(name), [d.challenge]);
    await fx.uc.domains.verify(fx.admin, o.id, d.id);
    expect(await fx.uc.domains.joinByDomain(verified.userId)).toEqual([]);
    const reader = await fx.uc.organizationRoles.create(fx.admin, { name: `reader-${unique()}`, permissions: [] });
    await fx.uc.organizations.update(fx.admin, o.id, { jitEnabled: true, jitRoles: [reader.name] });
    expect(await fx.uc.domains.joinByDomain(unverified.userId)).toEqual([]);
    expect(await fx.uc.domains.joinByDomain(verified.userId)).toEqual([o.id]);
    expect((await fx.uc.organizations.getMember(fx.admin, o.id, verified.userId)).roles).toEqual([reader.name]);
    expect(await fx.uc.domains.joinByDomain(verified.userId)).toEqual([]);
  });

  it('just in time: an email whose domain is written in Unicode matches the domain stored as A-labels', async () => {
    const o = await fx.uc.organizations.create(fx.admin, { name: 'U', slug: `u-${unique()}` });
    const name = `bücher-${unique()}.example`;
    const d = await fx.uc.domains.claim(fx.admin, o.id, name);
    expect(d.domain).toMatch(/^xn--/);
    fx.resolver.records.set(challengeName(d.domain), [d.challenge]);
    await fx.uc.domains.verify(fx.admin, o.id, d.id);
    await fx.uc.organizations.update(fx.admin, o.id, { jitEnabled: true, jitRoles: [] });
    const user = await newUser(name);
    await fx.ds.query('UPDATE users SET email_verified = true WHERE id = $1', [user.userId]);
    expect(await fx.uc.domains.joinByDomain(user.userId)).toEqual([o.id]);
  });
});
