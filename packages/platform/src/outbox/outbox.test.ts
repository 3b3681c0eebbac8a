import { SUBJECTS, STREAMS, decodeEvent } from '@iam/contracts';
import type { DataSource } from 'typeorm';
import type { EventBus, IncomingEvent, OutgoingEvent } from '../bus/port';
import { createDataSource, migrate } from '../db';
import { createTestDatabase, eventually, testBus, testLogger, testMetrics, type TestDatabase } from '../testing';
import { runWithTrace } from '../trace';
import { CreateOutbox1763800000000, OutboxEventRow, OutboxHeaders1764200000200, OutboxLease1764900000000, OutboxRelay, appendEvents, event } from '.';

/** A bus that can be switched off, standing for NATS being down; `reconnect()` brings it back as NATS's reconnect does. */
class SwitchableBus implements EventBus {
  readonly kind = 'memory' as const;
  up = true;
  private readonly reconnectListeners = new Set<() => void>();
  constructor(private readonly inner: EventBus) {}
  get reconnectWatchers(): number {
    return this.reconnectListeners.size;
  }
  reconnect(): void {
    this.up = true;
    for (const l of this.reconnectListeners) l();
  }
  onReconnect = (l: () => void) => {
    this.reconnectListeners.add(l);
    return () => void this.reconnectListeners.delete(l);
  };
  declareStreams = (s: Parameters<EventBus['declareStreams']>[0]) => this.inner.declareStreams(s);
  publish = async (e: OutgoingEvent) => {
    if (!this.up) throw new Error('bus down');
    await this.inner.publish(e);
  };
  consume = (s: Parameters<EventBus['consume']>[0]) => this.inner.consume(s);
  read = (s: Parameters<EventBus['read']>[0]) => this.inner.read(s);
  subscribe = (s: readonly string[], h: Parameters<EventBus['subscribe']>[1]) => this.inner.subscribe(s, h);
  consumerBacklog = (c: Parameters<EventBus['consumerBacklog']>[0]) => this.inner.consumerBacklog(c);
  check = () => this.inner.check();
  close = () => this.inner.close();
}

describe('transactional outbox', () => {
  const logger = testLogger();
  const metrics = testMetrics();
  let db: TestDatabase;
  let ds: DataSource;
  let bus: SwitchableBus;
  let received: IncomingEvent[];
  let stopConsumer: () => Promise<void>;

  beforeAll(async () => {
    db = await createTestDatabase('outbox');
    ds = createDataSource({ url: db.url, name: 'outbox-test', entities: [OutboxEventRow], migrations: [CreateOutbox1763800000000, OutboxHeaders1764200000200, OutboxLease1764900000000], logger });
    await ds.initialize();
    await migrate(ds, 'outbox-test', logger);
  });

  beforeEach(async () => {
    await ds.query('DELETE FROM outbox_events');
    bus = new SwitchableBus(testBus({ logger, metrics }));
    await bus.declareStreams([STREAMS.identity, STREAMS.deadLetter]);
    received = [];
    const sub = bus.consume({
      name: `outbox-test-${Date.now()}`,
      stream: STREAMS.identity,
      subjects: ['identity.>'],
      handler: async (e) => void received.push(e),
    });
    stopConsumer = () => sub.stop();
  });

  afterEach(async () => {
    await stopConsumer();
    await bus.close();
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const relays: OutboxRelay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
  });
  const relay = (extra: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {}) => {
    const r = new OutboxRelay({ dataSource: ds, databaseUrl: db.url, bus, logger, metrics, service: 'test', pollMs: 50, ...extra });
    relays.push(r);
    return r;
  };

  const revoked = (jti: string) => event(SUBJECTS.tokenRevoked, { jti, userId: 'u1', expiresAt: new Date(Date.now() + 60_000) });
  /** One event in a transaction of its own, in a millisecond of its own (so the relay's order is the append order). */
  const appendApart = async (jti: string) => {
    await new Promise((r) => setTimeout(r, 2));
    await ds.transaction((m) => appendEvents(m, [revoked(jti)]));
  };

  it('publishes what a committed transaction wrote, with its payload and trace, and marks it published', async () => {
    const r = relay();
    r.start();
    const TID = '1234567890abcdef1234567890abcdef';
    const [id] = await runWithTrace({ traceId: TID, spanId: '1234567890abcdef', flags: '01' }, () =>
      ds.transaction((m) => appendEvents(m, [revoked('jti-1')])),
    );
    await eventually(() => received.length === 1);
    expect(received[0]!.id).toBe(id);
    expect(received[0]!.subject).toBe(SUBJECTS.tokenRevoked);
    expect(decodeEvent(SUBJECTS.tokenRevoked, received[0]!.data).jti).toBe('jti-1');
    expect(received[0]!.traceparent).toContain(TID);
    await eventually(async () => {
      const [row] = await ds.query<[{ published_at: Date | null }]>('SELECT published_at FROM outbox_events WHERE id = $1', [id]);
      return row.published_at !== null;
    });
    await r.stop();
  });

  it('by default sleeps long at rest while LISTEN is up, and a new event still goes at once (NOTIFY)', async () => {
    const r = relay({ pollMs: undefined });
    let batches = 0;
    const query = ds.query.bind(ds);
    const spy = jest.spyOn(ds, 'query').mockImplementation(((sql: string, params?: unknown[]) => {
      if (/FROM outbox_events/.test(sql) && /lease_until/.test(sql) && /SELECT/.test(sql)) batches++;
      return query(sql, params);
    }) as typeof ds.query);
    try {
      r.start();
      await appendApart('wakes-it');
      await eventually(() => received.length === 1);
      const before = batches;
      await new Promise((res) => setTimeout(res, 3_000));
      // At rest: no claim in 3 s (the fallback poll is LISTENING_POLL_MS, 10 s, while listening).
      expect(batches - before).toBe(0);
      await appendApart('at-once');
      await eventually(() => received.length === 2, 2_000);
    } finally {
      spy.mockRestore();
    }
  });

  it('publishes nothing for a transaction that rolled back', async () => {
    const r = relay();
    r.start();
    await expect(
      ds.transaction(async (m) => {
        await appendEvents(m, [revoked('rolled-back')]);
        throw new Error('use case failed');
      }),
    ).rejects.toThrow('use case failed');
    await ds.transaction((m) => appendEvents(m, [revoked('marker')]));
    await eventually(() => received.length === 1);
    await new Promise((res) => setTimeout(res, 150));
    expect(received.map((e) => decodeEvent(SUBJECTS.tokenRevoked, e.data).jti)).toEqual(['marker']);
    await r.stop();
  });

  it('keeps events while the bus is down and publishes all of them, in order, once it is back', async () => {
    bus.up = false;
    const r = relay();
    r.start();
    for (let i = 0; i < 5; i++) await ds.transaction((m) => appendEvents(m, [revoked(`down-${i}`)]));
    await new Promise((res) => setTimeout(res, 300));
    expect(received).toHaveLength(0);
    const [{ attempts }] = await ds.query<[{ attempts: number }]>('SELECT max(attempts)::int AS attempts FROM outbox_events');
    expect(attempts).toBeGreaterThan(0);
    bus.up = true;
    await eventually(() => received.length === 5, 10_000);
    expect(received.map((e) => decodeEvent(SUBJECTS.tokenRevoked, e.data).jti)).toEqual([0, 1, 2, 3, 4].map((i) => `down-${i}`));
    await r.stop();
  });

  it("a reconnect of the bus ends the relay's backoff: what waited is published at once", async () => {
    bus.up = false;
    const r = relay({ pollMs: 60_000 });
    r.start();
    await ds.transaction((m) => appendEvents(m, [revoked('waited')]));
    // Failed tries back off 250 ms, 500 ms, 1 s, 2 s, 4 s: wait for the fifth (the next one is 5 s away).
    await eventually(async () => (await ds.query<[{ n: number }]>('SELECT max(attempts)::int AS n FROM outbox_events'))[0].n >= 5, 15_000, 20);
    const back = Date.now();
    bus.reconnect();
    await eventually(() => received.length === 1, 5_000, 5);
    expect(Date.now() - back).toBeLessThan(1_000);
    await r.stop();
  });

  it("the relay listens to the bus's reconnects while it runs, and stops listening when it stops", async () => {
    const r = relay();
    r.start();
    expect(bus.reconnectWatchers).toBe(1);
    await r.stop();
    expect(bus.reconnectWatchers).toBe(0);
  });

  it('two relays on one database publish each event once', async () => {
    const a = relay();
    const b = relay();
    a.start();
    b.start();
    for (let i = 0; i < 30; i++) await ds.transaction((m) => appendEvents(m, [revoked(`pair-${i}`)]));
    await eventually(() => received.length >= 30, 10_000);
    await new Promise((res) => setTimeout(res, 300));
    const jtis = received.map((e) => decodeEvent(SUBJECTS.tokenRevoked, e.data).jti);
    expect(new Set(jtis).size).toBe(30);
    expect(jtis).toHaveLength(30);
    await a.stop();
    await b.stop();
  });

  it('a batch of 250 is published in order, in two statements per batch and no transaction', async () => {
    // One transaction each, a millisecond apart: the order kept is (occurred_at, id), and events
    // made within one millisecond share their instant.
    for (let i = 0; i < 250; i++) await appendApart(`bulk-${String(i).padStart(3, '0')}`);
    const statements: string[] = [];
    const counting = new Proxy(ds, {
      get(target, key, receiver) {
        if (key === 'query') return (sql: string, params?: unknown[]) => (statements.push(sql.trim().split(/\s+/)[0]!), target.query(sql, params));
        if (key === 'transaction') return () => Promise.reject(new Error('the relay opened a transaction'));
        return Reflect.get(target, key, receiver);
      },
    });
    const r = relay({ dataSource: counting, batchSize: 100, backlogIntervalMs: 3_600_000 });
    r.start();
    await eventually(() => received.length === 250, 10_000);
    await r.stop();
    expect(received.map((e) => decodeEvent(SUBJECTS.tokenRevoked, e.data).jti)).toEqual(Array.from({ length: 250 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`));
    // Three full or partial batches (claim + mark each), then claims that found nothing; no
    // statement other than those two kinds (the backlog and cleanup are measured apart).
    const batches = statements.filter((q) => q === 'UPDATE').length;
    expect(batches).toBe(3);
    expect(statements.filter((q) => q === 'WITH').length).toBeGreaterThanOrEqual(batches);
    expect(statements.filter((q) => q !== 'UPDATE' && q !== 'WITH' && q !== 'DELETE' && q !== 'SELECT')).toEqual([]);
    const [{ n }] = await ds.query<[{ n: number }]>('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL OR lease_until IS NOT NULL');
    expect(n).toBe(0);
  });

  it("rows another relay holds a live lease on are left to it; once the lease runs out (that relay died), they are published", async () => {
    for (const jti of ['leased-1', 'leased-2']) await appendApart(jti);
    // A relay that claimed them and died: its lease runs 600 ms more.
    await ds.query("UPDATE outbox_events SET lease_until = now() + interval '600 milliseconds'");
    const started = Date.now();
    const r = relay({ pollMs: 50 });
    r.start();
    await new Promise((res) => setTimeout(res, 300));
    expect(received).toHaveLength(0);
    await eventually(() => received.length === 2, 5_000, 20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(received.map((e) => decodeEvent(SUBJECTS.tokenRevoked, e.data).jti)).toEqual(['leased-1', 'leased-2']);
    await r.stop();
  });

  it('a publish failure mid-batch marks what went before it, counts the attempt on it and releases the rest', async () => {
    for (const jti of ['ok-0', 'ok-1', 'fails', 'after']) await appendApart(jti);
    let failing = true;
    const inner = bus.publish;
    bus.publish = async (e: OutgoingEvent) => {
      if (failing && decodeEvent(SUBJECTS.tokenRevoked, e.data).jti === 'fails') throw new Error('bus refused');
      await inner(e);
    };
    const r = relay({ pollMs: 60_000 });
    r.start();
    await eventually(async () => (await ds.query<[{ n: number }]>("SELECT count(*)::int AS n FROM outbox_events WHERE attempts > 0"))[0].n === 1, 5_000, 20);
    // Stopped (it would try again after its backoff): a stop waits for the batch under way, whose
    // last statement releases what it claimed.
    await r.stop();
    const rows = await ds.query<Array<{ published: boolean; attempts: number; last_error: string | null; leased: boolean }>>(
      'SELECT published_at IS NOT NULL AS published, attempts, last_error, lease_until IS NOT NULL AS leased FROM outbox_events ORDER BY occurred_at, id',
    );
    expect(rows.map((x) => [x.published, x.attempts > 0, x.leased])).toEqual([[true, false, false], [true, false, false], [false, true, false], [false, false, false]]);
    expect(rows[2]!.last_error).toBe('bus refused');
    failing = false;
    const again = relay({ pollMs: 50 });
    again.start();
    await eventually(async () => (await ds.query<[{ n: number }]>('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL'))[0].n === 0, 5_000, 20);
    await again.stop();
  });
});
