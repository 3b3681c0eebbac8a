/**
 * Hostile and odd SCIM input on the real PostgreSQL: every refusal a 400 with the SCIM error
 * schema, never a database error or a 5xx — NUL and unpaired surrogates (values, keys, query
 * parameters), a deeply nested body, an overlong or deeply nested PATCH path, out-of-range
 * paging, control characters in a group's name — and PATCH forms that IdPs send (URN paths of
 * the Enterprise extension, removal by value path, a path-less replace).
 */
import { directoryFixture, unique } from '../../testing/app-fixture';
import { PATCH_OP, type ScimClient, scimClient } from '../../testing/scim-client';

const fx = directoryFixture('directory_scim_hostile');
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

let c: ScimClient;
beforeAll(async () => {
  c = await scimClient(fx);
});

const user = (extra: Record<string, unknown> = {}) => ({ schemas: [USER], userName: `h.${unique()}@example.com`, name: { givenName: 'Hos', familyName: 'Tile' }, ...extra });
const refused = async (r: Promise<{ status: number; body: { status: string; scimType?: string } }>) => {
  const a = await r;
  return { status: a.status, bodyStatus: a.body.status, scimType: a.body.scimType };
};

describe('hostile input', () => {
  it('NUL and unpaired surrogates anywhere are 400 invalidValue', async () => {
    for (const body of [user({ userName: 'a\u0000b@example.com' }), user({ title: 'x\ud800' }), user({ ['bad\u0000key']: 1 }), user({ [ENTERPRISE]: { department: '\u0000' } })]) {
      expect(await refused(c.call('POST', '/Users', { body }))).toEqual({ status: 400, bodyStatus: '400', scimType: 'invalidValue' });
    }
    expect(await refused(c.call('GET', '/Users', { query: { filter: 'userName eq "a\u0000"' } }))).toMatchObject({ status: 400, scimType: 'invalidValue' });
  });

  it('a body nested deeper than 32 levels is 400 invalidSyntax', async () => {
    for (const depth of [33, 5_000, 100_000]) {
      const raw = JSON.stringify(user()).replace(/}$/, `,"title":${'['.repeat(depth)}"x"${']'.repeat(depth)}}`);
      expect(await refused(c.call('POST', '/Users', { raw }))).toMatchObject({ status: 400, scimType: 'invalidSyntax' });
    }
  });

  it('PATCH paths are bounded like filters; a path the library cannot apply is a 400', async () => {
    const u = (await c.call('POST', '/Users', { body: user() })).body as { id: string };
    const deep = `emails[${'('.repeat(2_000)}type eq "work"${')'.repeat(2_000)}].value`;
    for (const path of [deep, `a${'.b'.repeat(2_000)}`, 'emails[type eq].value']) {
      const r = await refused(c.call('PATCH', `/Users/${u.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path, value: 'x' }] } }));
      expect({ path: path.slice(0, 20), status: r.status }).toEqual({ path: path.slice(0, 20), status: 400 });
    }
    expect((await c.call('PATCH', `/Users/${u.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'copy', path: 'title', value: 'x' }] } })).status).toBe(400);
    expect((await c.call('PATCH', `/Users/${u.id}`, { body: { Operations: [{ op: 'replace', path: 'title', value: 'x' }] } })).status).toBe(400);
  });

  it('paging out of range is a 400, never a database error; a huge startIndex in range answers an empty page', async () => {
    for (const startIndex of ['1e21', '99999999999', 'abc', '1.5']) expect(await refused(c.call('GET', '/Users', { query: { startIndex } }))).toMatchObject({ status: 400, scimType: 'invalidValue' });
    const far = await c.call('GET', '/Users', { query: { startIndex: '2000000000' } });
    expect([far.status, far.body.Resources]).toEqual([200, []]);
    expect(await refused(c.call('GET', '/Users', { query: { sortBy: 'emails' } }))).toMatchObject({ status: 400, scimType: 'invalidValue' });
  });

  it("a group's displayName with control characters is refused", async () => {
    expect(await refused(c.call('POST', '/Groups', { body: { displayName: 'a\u0007b' } }))).toMatchObject({ status: 400, scimType: 'invalidValue' });
    expect(await refused(c.call('POST', '/Groups', { body: { displayName: '' } }))).toMatchObject({ status: 400 });
  });
});

describe('PATCH forms identity providers send', () => {
  it('URN paths of the Enterprise extension, removal by value path, a path-less replace', async () => {
    const u = (await c.call('POST', '/Users', { body: user({ emails: [{ value: `w.${unique()}@example.com`, type: 'work', primary: true }, { value: `h.${unique()}@example.com`, type: 'home' }] }) })).body as { id: string };
    const r = await c.call('PATCH', `/Users/${u.id}`, {
      body: {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Sales' },
          { op: 'remove', path: 'emails[type eq "home"]' },
          { op: 'replace', value: { displayName: 'Hos Tile', 'name.givenName': 'Hostile' } },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body[ENTERPRISE]).toEqual({ department: 'Sales' });
    expect(r.body.emails.map((e: { type: string }) => e.type)).toEqual(['work']);
    expect(r.body.displayName).toBe('Hos Tile');
    expect(r.body.name.givenName).toBe('Hostile');
    expect((await c.call('GET', '/Users', { query: { filter: `${ENTERPRISE}:department eq "sales"` } })).body.totalResults).toBe(1);
  });
});
