/**
 * The PostgreSQL adapter's contract, modelled on oidc-provider's adapter tests
 * (test/adapters/memory_adapter.test.js), against the real database: expiry of primary rows and
 * of the uid and user-code lookups, consumption, destroy, revocation by grant across kinds,
 * re-upsert moving a row to another grant, and the subject / client / housekeeping deletes; and
 * what a token request's adapters share (the grant read with its token; the writes collected
 * and written in one statement, all or none, refused when the token was consumed meanwhile).
 */
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from '../schema';
import { GrantReadAhead, PgOidcAdapter, PgProviderGrants, purgeExpiredOidc, revokeOidcClient, revokeOidcSubject } from './pg-adapter';
import { ConsumedMeanwhile, TokenRequestWrites } from './token-writes';

describe('PgOidcAdapter', () => {
  let db: MigratedDatabase;
  const adapter = (kind: string) => new PgOidcAdapter(db.ds, kind);
  /** Moves a row's expiry into the past (the database's clock decides expiry). */
  const expire = (kind: string, id: string) => db.ds.query(`UPDATE oidc_payloads SET expires_at = now() - interval '1 second' WHERE kind = $1 AND id = $2`, [kind, id]);

  beforeAll(async () => {
    db = await migratedTestDatabase('identity', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  it('stores and finds a payload; an expired one is not found', async () => {
    const a = adapter('AccessToken');
    const payload = { accountId: 'account', jti: 'token-1', kind: 'AccessToken' };
    await a.upsert('token-1', payload, 60);
    expect(await a.find('token-1')).toEqual(payload);
    await expire('AccessToken', 'token-1');
    expect(await a.find('token-1')).toBeUndefined();
  });

  it('a payload without expiry stays; ids are per kind', async () => {
    await adapter('Session').upsert('same', { uid: 'u-same' });
    expect(await adapter('Grant').find('same')).toBeUndefined();
    expect(await adapter('Session').find('same')).toEqual({ uid: 'u-same' });
  });

  it('expires session uid lookups', async () => {
    const s = adapter('Session');
    await s.upsert('session-1', { uid: 'uid-1' }, 60);
    expect(await s.findByUid('uid-1')).toEqual({ uid: 'uid-1' });
    await expire('Session', 'session-1');
    expect(await s.findByUid('uid-1')).toBeUndefined();
  });

  it('expires user code lookups', async () => {
    const d = adapter('DeviceCode');
    await d.upsert('device-1', { userCode: 'ABCD-EFGH' }, 60);
    expect(await d.findByUserCode('ABCD-EFGH')).toEqual({ userCode: 'ABCD-EFGH' });
    await expire('DeviceCode', 'device-1');
    expect(await d.findByUserCode('ABCD-EFGH')).toBeUndefined();
  });

  it('updates the uid and user-code lookups on upsert', async () => {
    const s = adapter('Session');
    await s.upsert('session-2', { uid: 'old-uid' }, 60);
    await s.upsert('session-2', { uid: 'new-uid' }, 60);
    expect(await s.findByUid('old-uid')).toBeUndefined();
    expect(await s.findByUid('new-uid')).toEqual({ uid: 'new-uid' });
  });

  it('consume marks the payload consumed (with a time), once', async () => {
    const c = adapter('AuthorizationCode');
    await c.upsert('code-1', { grantId: 'g-code' }, 60);
    await c.consume('code-1');
    const found = await c.find('code-1');
    expect(found).toEqual(expect.objectContaining({ grantId: 'g-code', consumed: expect.any(Number) }));
  });

  it('destroy removes the payload', async () => {
    const r = adapter('RefreshToken');
    await r.upsert('rt-1', { grantId: 'g-destroy' }, 60);
    await r.destroy('rt-1');
    expect(await r.find('rt-1')).toBeUndefined();
  });

  it('revokeByGrantId removes every kind of the grant, and only that grant', async () => {
    await adapter('AccessToken').upsert('at-g', { grantId: 'g-1' }, 60);
    await adapter('RefreshToken').upsert('rt-g', { grantId: 'g-1' }, 60);
    await adapter('AuthorizationCode').upsert('ac-g', { grantId: 'g-1' }, 60);
    await adapter('AccessToken').upsert('at-other', { grantId: 'g-2' }, 60);
    await adapter('AccessToken').revokeByGrantId('g-1');
    expect(await adapter('AccessToken').find('at-g')).toBeUndefined();
    expect(await adapter('RefreshToken').find('rt-g')).toBeUndefined();
    expect(await adapter('AuthorizationCode').find('ac-g')).toBeUndefined();
    expect(await adapter('AccessToken').find('at-other')).toEqual({ grantId: 'g-2' });
  });

  it('moves grant membership when a record is updated', async () => {
    const a = adapter('AccessToken');
    await a.upsert('moving', { grantId: 'first' }, 60);
    await a.upsert('moving', { grantId: 'second' }, 60);
    await a.revokeByGrantId('first');
    expect(await a.find('moving')).toEqual({ grantId: 'second' });
    await a.revokeByGrantId('second');
    expect(await a.find('moving')).toBeUndefined();
  });

  it('a subject revocation removes every record of the account; a client deletion every record of the client', async () => {
    await adapter('Session').upsert('s-acc', { accountId: 'acc-9', uid: 'u-acc' }, 60);
    await adapter('Grant').upsert('g-acc', { accountId: 'acc-9', clientId: 'c-1' }, 60);
    await adapter('AccessToken').upsert('t-other', { accountId: 'acc-10', clientId: 'c-2' }, 60);
    expect(await revokeOidcSubject(db.ds, 'acc-9')).toBe(2);
    expect(await adapter('Session').findByUid('u-acc')).toBeUndefined();
    expect(await adapter('AccessToken').find('t-other')).toBeDefined();
    expect(await revokeOidcClient(db.ds, 'c-2')).toEqual({ records: 1, grants: 0 });
    expect(await adapter('AccessToken').find('t-other')).toBeUndefined();
  });

  it("a client's records end with the transaction that deletes it: kept when it rolls back, gone when it commits", async () => {
    await adapter('Grant').upsert('g-del', { accountId: 'acc-11', clientId: 'c-del' }, 60);
    await adapter('RefreshToken').upsert('rt-del', { accountId: 'acc-11', clientId: 'c-del', grantId: 'g-del' }, 60);
    await adapter('ClientCredentials').upsert('cc-del', { clientId: 'c-del' }, 60);
    await adapter('RefreshToken').upsert('rt-keep', { accountId: 'acc-11', clientId: 'c-keep', grantId: 'g-keep' }, 60);
    await expect(
      db.ds.transaction(async (m) => {
        expect(await new PgProviderGrants(m).endClient('c-del')).toEqual({ records: 3, grants: 1 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await adapter('RefreshToken').find('rt-del')).toBeDefined();
    await db.ds.transaction((m) => new PgProviderGrants(m).endClient('c-del'));
    expect(await adapter('RefreshToken').find('rt-del')).toBeUndefined();
    expect(await adapter('Grant').find('g-del')).toBeUndefined();
    expect(await adapter('ClientCredentials').find('cc-del')).toBeUndefined();
    expect(await adapter('RefreshToken').find('rt-keep')).toBeDefined();
  });

  it('housekeeping deletes expired rows only', async () => {
    await adapter('Interaction').upsert('i-old', { uid: 'x' }, 60);
    await adapter('Interaction').upsert('i-live', { uid: 'y' }, 60);
    await expire('Interaction', 'i-old');
    await purgeExpiredOidc(db.ds);
    const [{ n }] = await db.ds.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM oidc_payloads WHERE kind = 'Interaction'`);
    expect(n).toBe(1);
  });

  describe("a token request's reads and writes", () => {
    const consumedAt = async (id: string) =>
      (await db.ds.query<Array<{ consumed_at: Date | null }>>(`SELECT consumed_at FROM oidc_payloads WHERE kind = 'RefreshToken' AND id = $1`, [id]))[0]?.consumed_at ?? null;
    const shared = () => ({ readAhead: new GrantReadAhead(), writes: new TokenRequestWrites(db.ds) });

    it("a refresh token's find brings its live grant along: the grant's find answers from it once, without reading", async () => {
      const x = shared();
      const [rt, grant] = [new PgOidcAdapter(db.ds, 'RefreshToken', x), new PgOidcAdapter(db.ds, 'Grant', x)];
      await grant.upsert('g-ahead', { accountId: 'acc-a', clientId: 'c-a' }, 60);
      await rt.upsert('rt-ahead', { grantId: 'g-ahead', clientId: 'c-a' }, 60);
      expect(await rt.find('rt-ahead')).toEqual({ grantId: 'g-ahead', clientId: 'c-a' });
      // Gone behind the adapter's back: the read-ahead still answers (no read), then only the database.
      await db.ds.query(`DELETE FROM oidc_payloads WHERE kind = 'Grant' AND id = 'g-ahead'`);
      expect(await grant.find('g-ahead')).toEqual({ accountId: 'acc-a', clientId: 'c-a' });
      expect(await grant.find('g-ahead')).toBeUndefined();
    });

    it('an expired grant is not read ahead; a revocation or change of the grant drops what was', async () => {
      const x = shared();
      const [rt, grant] = [new PgOidcAdapter(db.ds, 'RefreshToken', x), new PgOidcAdapter(db.ds, 'Grant', x)];
      await grant.upsert('g-old', { accountId: 'acc-b' }, 60);
      await rt.upsert('rt-old', { grantId: 'g-old' }, 60);
      await expire('Grant', 'g-old');
      expect(await rt.find('rt-old')).toEqual({ grantId: 'g-old' });
      expect(await grant.find('g-old')).toBeUndefined();

      await grant.upsert('g-rev', { accountId: 'acc-b' }, 60);
      await rt.upsert('rt-rev', { grantId: 'g-rev' }, 60);
      await rt.find('rt-rev');
      await db.ds.query(`DELETE FROM oidc_payloads WHERE kind = 'Grant' AND id = 'g-rev'`);
      await rt.revokeByGrantId('g-rev');
      expect(await grant.find('g-rev')).toBeUndefined();

      await grant.upsert('g-chg', { accountId: 'acc-b', scope: 'a' }, 60);
      await rt.upsert('rt-chg', { grantId: 'g-chg' }, 60);
      await rt.find('rt-chg');
      await grant.upsert('g-chg', { accountId: 'acc-b', scope: 'a b' }, 60);
      expect(await grant.find('g-chg')).toEqual({ accountId: 'acc-b', scope: 'a b' });
    });

    it("a rotation's writes (consume, next refresh token, access token) go out together when the request ends", async () => {
      const x = shared();
      const [rt, at] = [new PgOidcAdapter(db.ds, 'RefreshToken', x), new PgOidcAdapter(db.ds, 'AccessToken', x)];
      await rt.upsert('rt-1st', { grantId: 'g-rot' }, 60);
      await x.writes.collect(async () => {
        expect(await rt.find('rt-1st')).toEqual({ grantId: 'g-rot' });
        await rt.consume('rt-1st');
        await rt.upsert('rt-2nd', { grantId: 'g-rot' }, 60);
        await at.upsert('at-2nd', { grantId: 'g-rot' }, 30);
        // Collected, not written yet.
        expect(await consumedAt('rt-1st')).toBeNull();
        expect(await new PgOidcAdapter(db.ds, 'AccessToken').find('at-2nd')).toBeUndefined();
      });
      // One statement: the consume's time is the statement's now(), the one the successor's expiry counts from.
      const [{ same }] = await db.ds.query<[{ same: boolean }]>(
        `SELECT (SELECT consumed_at FROM oidc_payloads WHERE kind = 'RefreshToken' AND id = 'rt-1st') + interval '60 seconds'
           = (SELECT expires_at FROM oidc_payloads WHERE kind = 'RefreshToken' AND id = 'rt-2nd') AS same`,
      );
      expect(same).toBe(true);
      expect(await at.find('at-2nd')).toEqual({ grantId: 'g-rot' });
      // Presented again: found consumed (the library's reuse detection revokes the grant).
      expect(await rt.find('rt-1st')).toEqual(expect.objectContaining({ consumed: expect.any(Number) }));
    });

    it('a token consumed meanwhile (presented twice at once): nothing of the second request is written, and it is refused', async () => {
      const x = shared();
      const rt = new PgOidcAdapter(db.ds, 'RefreshToken', x);
      await rt.upsert('rt-twice', { grantId: 'g-twice' }, 60);
      await expect(
        x.writes.collect(async () => {
          await rt.find('rt-twice');
          await rt.consume('rt-twice');
          await rt.upsert('rt-twice-next', { grantId: 'g-twice' }, 60);
          // The other request's consume lands first.
          await db.ds.query(`UPDATE oidc_payloads SET consumed_at = now() WHERE kind = 'RefreshToken' AND id = 'rt-twice'`);
        }),
      ).rejects.toBeInstanceOf(ConsumedMeanwhile);
      const [{ n }] = await db.ds.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM oidc_payloads WHERE id = 'rt-twice-next'`);
      expect(n).toBe(0);
    });

    it('a request answered with an error (a refresh refused as invalid_target after the consume) writes nothing it collected', async () => {
      const x = shared();
      const rt = new PgOidcAdapter(db.ds, 'RefreshToken', x);
      await rt.upsert('rt-refused', { grantId: 'g-refused' }, 60);
      await x.writes.collect(async () => {
        await rt.find('rt-refused');
        await rt.consume('rt-refused');
        await rt.upsert('rt-refused-next', { grantId: 'g-refused' }, 60);
        x.writes.discard();
      });
      expect(await consumedAt('rt-refused')).toBeNull();
      expect(await rt.find('rt-refused-next')).toBeUndefined();
    });

    it('all or none: a write that fails leaves the consume undone', async () => {
      const x = shared();
      const rt = new PgOidcAdapter(db.ds, 'RefreshToken', x);
      await rt.upsert('rt-fail', { grantId: 'g-fail' }, 60);
      await expect(
        x.writes.collect(async () => {
          await rt.consume('rt-fail');
          // jsonb refuses a NUL character: the statement fails as a whole.
          await rt.upsert('rt-fail-next', { grantId: 'g-fail', bad: 'nul\u0000' }, 60);
        }),
      ).rejects.toThrow();
      expect(await consumedAt('rt-fail')).toBeNull();
    });

    it('a row written twice in one request: the first write goes out before the second is collected', async () => {
      const x = shared();
      const dc = new PgOidcAdapter(db.ds, 'DeviceCode', x);
      await dc.upsert('dc-twice', { userCode: 'TWICE-ONE' }, 60);
      await x.writes.collect(async () => {
        await dc.consume('dc-twice');
        await dc.upsert('dc-twice', { userCode: 'TWICE-TWO' }, 60);
        await dc.upsert('dc-twice', { userCode: 'TWICE-THREE' }, 60);
      });
      // Written in order, each once (a re-save keeps the consume, as a plain upsert does).
      expect(await dc.findByUserCode('TWICE-THREE')).toEqual({ userCode: 'TWICE-THREE', consumed: expect.any(Number) });
    });

    it('a write the request left running after its answer goes alone (not lost with the finished request)', async () => {
      const x = shared();
      const at = new PgOidcAdapter(db.ds, 'AccessToken', x);
      let late: Promise<void> | undefined;
      await x.writes.collect(async () => {
        late = new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => at.upsert('at-late', { grantId: 'g-late' }, 30));
      });
      await late;
      expect(await at.find('at-late')).toEqual({ grantId: 'g-late' });
    });

    it('a read inside the request sees its writes; outside a request, writes go at once and a second consume is a no-op', async () => {
      const x = shared();
      const session = new PgOidcAdapter(db.ds, 'Session', x);
      await x.writes.collect(async () => {
        await session.upsert('s-inside', { uid: 'u-inside' }, 60);
        expect(await session.findByUid('u-inside')).toEqual({ uid: 'u-inside' });
      });
      const rt = new PgOidcAdapter(db.ds, 'RefreshToken', x);
      await rt.upsert('rt-out', { grantId: 'g-out' }, 60);
      await rt.consume('rt-out');
      const first = await consumedAt('rt-out');
      expect(first).toEqual(expect.any(Date));
      await rt.consume('rt-out');
      expect(await consumedAt('rt-out')).toEqual(first);
    });
  });
});
