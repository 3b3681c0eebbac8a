/**
 * withQueryDeadline on the real PostgreSQL, reached through a relay that can blackhole it (issue
 * #35, item 3): a query whose answer does not come fails at the deadline (its connection closed)
 * instead of waiting on TCP, a transaction cut off that way commits nothing once the network is
 * back, the pool goes on with new connections, and work outside the scope is not bounded.
 */
import type { DataSource } from 'typeorm';
import { isDependencyUnreachable } from '../errors';
import { TcpRelay, type TestDatabase, createTestDatabase, testLogger } from '../testing';
import { createDataSource } from './data-source';
import { queryNamed } from './named-statements';
import { QueryDeadlineExceeded, outsideQueryDeadline, queryDeadline, withQueryDeadline } from './query-deadline';

const DEADLINE_MS = 400;
/**
 * The commit test's deadline must fall at the commit, not earlier: BEGIN and the INSERT take
 * well under it even on a loaded machine (under `make test` 400 ms was sometimes reached before
 * the commit, and the cut-off then hit the INSERT or the rollback instead).
 */
const COMMIT_DEADLINE_MS = 2_000;

describe('query deadline (withQueryDeadline)', () => {
  let db: TestDatabase;
  let relay: TcpRelay;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('qdeadline');
    const url = new URL(db.url);
    relay = await TcpRelay.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    ds = createDataSource({ url: url.toString(), name: 'qdeadline', entities: [], migrations: [], logger: testLogger(), poolSize: 2 });
    await ds.initialize();
    await ds.query('CREATE TABLE t (n int)');
  });

  afterAll(async () => {
    relay?.blackhole(false);
    await ds?.destroy();
    await relay?.close();
    await db?.drop();
  });

  afterEach(() => relay.blackhole(false));

  const rows = async (): Promise<number> => Number((await ds.query<Array<{ n: string }>>('SELECT count(*) AS n FROM t'))[0]!.n);

  it('a query with no answer (a blackholed server) fails at the deadline as unreachable; the pool goes on afterwards', async () => {
    expect(await rows()).toBe(0);
    relay.blackhole(true);
    const started = Date.now();
    const err = await withQueryDeadline(started + DEADLINE_MS, () => ds.query('SELECT 1')).then(
      () => undefined,
      (e: unknown) => e,
    );
    const took = Date.now() - started;
    // Not before the deadline; the upper bound is the test's own timeout (without the deadline it waits on TCP for minutes).
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(isDependencyUnreachable(err)).toBe(true);
    expect(JSON.stringify(String(err))).toMatch(/deadline/);
    relay.blackhole(false);
    expect(await withQueryDeadline(Date.now() + 5_000, () => rows())).toBe(0);
  });

  it('a transaction cut off at its commit commits nothing, even once the network is back', async () => {
    const before = await rows();
    const err = await withQueryDeadline(Date.now() + COMMIT_DEADLINE_MS, () =>
      ds.transaction(async (m) => {
        await m.query('INSERT INTO t (n) VALUES (1)');
        relay.blackhole(true);
      }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDependencyUnreachable(err)).toBe(true);
    relay.blackhole(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(await rows()).toBe(before);
  });

  it("a query waiting for the pool's one connection keeps its own deadline (none here), not the one of the request that frees it", async () => {
    const one = createDataSource({ url: db.url, name: 'qdeadline-one', entities: [], migrations: [], logger: testLogger(), poolSize: 1 });
    await one.initialize();
    try {
      // A provider request (a deadline) holds the only connection; a call without a deadline
      // (a gRPC handler's named statement, on pg-pool's callbacks) waits for it, then runs a
      // query longer than what was left of the request's deadline.
      const holder = withQueryDeadline(Date.now() + 600, () => one.query('SELECT pg_sleep(0.2)'));
      await new Promise((r) => setTimeout(r, 50));
      const waiter = queryNamed<{ one: number }>(one.manager, 'qdeadline.waiter', 'SELECT pg_sleep(0.8), 1 AS one', []);
      await holder;
      expect((await waiter).map((r) => r.one)).toEqual([1]);
    } finally {
      await one.destroy();
    }
  });

  it('a query started after the deadline fails at once without touching the pool; outside the scope nothing is bounded', async () => {
    // TypeORM wraps what the driver raised (QueryFailedError.driverError).
    await expect(withQueryDeadline(Date.now() - 1, () => ds.query('SELECT 1'))).rejects.toMatchObject({ driverError: expect.any(QueryDeadlineExceeded) });
    // A slow query on a healthy server, outside any deadline and outside a request's.
    expect(await ds.query('SELECT pg_sleep(0.3), 1 AS one')).toEqual([{ pg_sleep: '', one: 1 }]);
    await withQueryDeadline(Date.now() + 100, async () => {
      expect(queryDeadline()).toBeDefined();
      await outsideQueryDeadline(async () => {
        expect(queryDeadline()).toBeUndefined();
        expect(await ds.query('SELECT pg_sleep(0.3), 1 AS one')).toEqual([{ pg_sleep: '', one: 1 }]);
      });
    });
  });
});
