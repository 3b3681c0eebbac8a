/**
 * A SCIM connection provisions addresses of its organization's verified domains only, on the
 * real PostgreSQL: an email elsewhere (another organization's verified domain, a pending one, an
 * existing account's) is a 400 `invalidValue` naming `emails`, on create, PUT, PATCH and in Bulk,
 * with nothing written and no 409 telling that an account exists; an email on a verified domain
 * passes whatever its case, or whether its domain is written in Unicode or in A-labels.
 */
import { directoryFixture, unique } from '../../testing/app-fixture';
import { PATCH_OP, type ScimClient, claimDomain, scimClient } from '../../testing/scim-client';

const fx = directoryFixture('directory_scim_domains');
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';

let a: ScimClient;
let b: ScimClient;
beforeAll(async () => {
  a = await scimClient(fx);
  b = await scimClient(fx);
});

const user = (email: string) => ({ schemas: [USER], userName: email, name: { givenName: 'Do', familyName: 'Main' } });
const refusal = (r: { status: number; body: { scimType?: string; detail?: string } }) => ({ status: r.status, scimType: r.body.scimType, namesEmails: /\bemails\b/.test(r.body.detail ?? '') });
const REFUSED = { status: 400, scimType: 'invalidValue', namesEmails: true };
const rowsOf = async (email: string) => Number((await fx.ds.query<[{ n: string }]>('SELECT count(*) AS n FROM users WHERE email = $1', [email]))[0].n);
const membersOf = async (organizationId: string) => Number((await fx.ds.query<[{ n: string }]>('SELECT count(*) AS n FROM organization_members WHERE organization_id = $1', [organizationId]))[0].n);

/** Refused with nothing written: no account, no membership, no event. */
async function refusedCreate(c: ScimClient, email: string): Promise<void> {
  await fx.newEvents();
  const members = await membersOf(c.organizationId);
  expect(refusal(await c.call('POST', '/Users', { body: user(email) }))).toEqual(REFUSED);
  expect(await rowsOf(email.toLowerCase())).toBe(0);
  expect(await membersOf(c.organizationId)).toBe(members);
  expect(await fx.newEvents()).toEqual([]);
}

describe('SCIM emails on verified domains only', () => {
  it('a create with an email outside the verified domains is a 400 invalidValue naming emails, nothing written', async () => {
    await refusedCreate(a, `squat-${unique()}@elsewhere-${unique()}.example`);
  });

  it("an existing account's email outside the verified domains is the same 400, not a 409 telling it exists", async () => {
    expect(await rowsOf(fx.admin.email)).toBe(1);
    expect(refusal(await a.call('POST', '/Users', { body: user(fx.admin.email) }))).toEqual(REFUSED);
  });

  it("another organization's verified domain does not count", async () => {
    await refusedCreate(a, `x-${unique()}@${b.domain}`);
    expect((await b.call('POST', '/Users', { body: user(`x-${unique()}@${b.domain}`) })).status).toBe(201);
  });

  it('a pending (unverified) domain does not count', async () => {
    const pending = await claimDomain(fx, a.organizationId, `pending-${unique()}.example`, { verify: false });
    expect(pending.status).toBe('pending');
    await refusedCreate(a, `p-${unique()}@${pending.domain}`);
  });

  it('a verified domain passes in any case, and in Unicode when stored as A-labels', async () => {
    expect((await a.call('POST', '/Users', { body: user(`Up-${unique()}@${a.domain.toUpperCase()}`) })).status).toBe(201);
    const idn = await scimClient(fx, { domains: [`bücher-${unique()}.example`] });
    expect(idn.domain).toMatch(/^bücher-/);
    const r = await idn.call('POST', '/Users', { body: user(`anna-${unique()}@${idn.domain}`) });
    expect(r.status).toBe(201);
  });

  it('a PATCH or PUT moving the email to another domain is a 400 and changes nothing; Bulk answers the same', async () => {
    const email = `move-${unique()}@${a.domain}`;
    const u = (await a.call('POST', '/Users', { body: user(email) })).body as { id: string; meta: { version: string } };
    await fx.newEvents();
    const elsewhere = `move-${unique()}@${b.domain}`;
    const patch = { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: elsewhere }] };
    expect(refusal(await a.call('PATCH', `/Users/${u.id}`, { body: patch }))).toEqual(REFUSED);
    expect(refusal(await a.call('PUT', `/Users/${u.id}`, { body: user(elsewhere) }))).toEqual(REFUSED);
    const bulk = await a.call('POST', '/Bulk', {
      body: { schemas: [BULK], Operations: [{ method: 'PATCH', path: `/Users/${u.id}`, data: patch }, { method: 'POST', path: '/Users', bulkId: 'n', data: user(`n-${unique()}@${b.domain}`) }] },
    });
    expect(bulk.body.Operations.map((o: { status: string; response: { scimType: string } }) => [o.status, o.response.scimType])).toEqual([['400', 'invalidValue'], ['400', 'invalidValue']]);
    const now = await a.call('GET', `/Users/${u.id}`);
    expect(now.body.emails[0].value).toBe(email);
    expect(now.body.meta.version).toBe(u.meta.version);
    expect(await rowsOf(elsewhere)).toBe(0);
    expect(await fx.newEvents()).toEqual([]);
    // Changing anything but the email needs no domain check; moving within the verified domains passes.
    const within = `moved-${unique()}@${a.domain}`;
    expect((await a.call('PATCH', `/Users/${u.id}`, { body: { ...patch, Operations: [{ ...patch.Operations[0], value: within }] } })).body.emails[0].value).toBe(within);
  });
});
