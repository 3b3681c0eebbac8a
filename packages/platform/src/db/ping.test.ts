/**
 * Readiness of a database under load (issue #14, found by make soak): a pool whose connections
 * are all busy still answers, so the service stays ready; a database that does not answer is down.
 */
import { createDataSource, pingDatabase } from '.';
import { createTestDatabase, testLogger, type TestDatabase } from '../testing';

describe('pingDatabase', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('ping');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('busy is not down: every connection taken, the database answered a moment ago → up at once', async () => {
    const ds = createDataSource({ url: db.url, name: 'ping', entities: [], migrations: [], logger: testLogger(), poolSize: 2 });
    await ds.initialize();
    try {
      await pingDatabase(ds); // as the health monitor does from the start: it watches the pool from then on
      await new Promise((r) => setTimeout(r, 1_100));
      await ds.query('SELECT 1');
      const busy = Promise.all([ds.query('SELECT pg_sleep(1.5)'), ds.query('SELECT pg_sleep(1.5)')]);
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await expect(pingDatabase(ds, 1_000)).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(100);
      await busy;
      // Nothing answered for longer than the timeout, every connection busy: the ping waits, and fails.
      await new Promise((r) => setTimeout(r, 1_100));
      const stuck = Promise.all([ds.query('SELECT pg_sleep(2)'), ds.query('SELECT pg_sleep(2)')]);
      await new Promise((r) => setTimeout(r, 100));
      await expect(pingDatabase(ds, 500)).rejects.toThrow(/timed out/);
      await stuck;
    } finally {
      await ds.destroy();
    }
  });

  it('a database that is gone fails the ping', async () => {
    const ds = createDataSource({ url: db.url.replace(/:(\d+)\//, ':1/'), name: 'ping-gone', entities: [], migrations: [], logger: testLogger() });
    await expect(pingDatabase(ds, 500)).rejects.toThrow();
  });
});
