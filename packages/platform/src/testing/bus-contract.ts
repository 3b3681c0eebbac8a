/// <reference types="jest" />
/**
 * The contract every EventBus adapter passes: publish/consume round trip, deduplication by id,
 * durable consumers sharing work and resuming after a restart, redelivery with backoff, dead
 * letters after the last delivery or a permanent error, broadcast subscriptions, trace headers,
 * and the reconnect listeners (for a bus with a broker, whose connection the factory can cut).
 */
import { randomUUID } from 'node:crypto';
import type { StreamSpec } from '@iam/contracts';
import type { EventBus, IncomingEvent } from '../bus/port';
import { PermanentEventError } from '../bus/port';
import { currentTrace } from '../trace';

export interface BusFactory {
  /** A new bus in a world of its own (a fresh namespace on the broker). */
  create(): EventBus;
  /** Another instance on the same world as `of` (another replica / process). */
  peer(of: EventBus): EventBus;
  /** Removes what the tests left on the broker. */
  cleanup?(): Promise<void>;
  /**
   * A new bus (a world of its own) and a way to drop its connection to the broker, which stays up,
   * so that it reconnects. Absent for a bus that has no broker (the in-process one).
   */
  interruptible?(): Promise<{ bus: EventBus; interrupt: () => void; close: () => Promise<void> }>;
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

export function runEventBusContract(name: string, makeFactory: () => BusFactory | undefined): void {
  const factoryOrSkip = makeFactory();
  const d = factoryOrSkip ? describe : describe.skip;
  d(`EventBus contract: ${name}`, () => {
    const factory = factoryOrSkip!;
    const buses: EventBus[] = [];
    let first: EventBus | undefined;
    const bus = (): EventBus => {
      const b = first ? factory.peer(first) : (first = factory.create());
      buses.push(b);
      return b;
    };
    let stream: StreamSpec;
    let dead: StreamSpec;

    beforeEach(() => {
      const tag = `c${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      stream = { name: `S_${tag.toUpperCase()}`, subjects: [`${tag}.>`], maxAgeSeconds: 3600 };
      dead = { name: `DEAD_${tag.toUpperCase()}`, subjects: [`dead.${tag}-consumer`, `dead.${tag}-consumer-2`], maxAgeSeconds: 3600 };
    });

    afterEach(async () => {
      await Promise.all(buses.splice(0).map((b) => b.close()));
      first = undefined;
    });

    afterAll(async () => {
      await factory.cleanup?.();
    });

    const subj = (verb: string): string => `${stream.subjects[0]!.replace('>', '')}thing.${verb}`;
    const consumerName = (): string => `${stream.subjects[0]!.replace('.>', '')}-consumer`;
    const ev = (subject: string, body: string, id = randomUUID()) => ({ id, subject, data: enc(body), occurredAt: new Date(), traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });

    function collector() {
      const got: IncomingEvent[] = [];
      const waiters: Array<() => void> = [];
      return {
        got,
        handler: async (e: IncomingEvent) => {
          got.push(e);
          waiters.splice(0).forEach((w) => w());
        },
        async waitFor(n: number, ms = 5_000): Promise<IncomingEvent[]> {
          const deadline = Date.now() + ms;
          while (got.length < n) {
            if (Date.now() > deadline) throw new Error(`expected ${n} events, got ${got.length}`);
            await new Promise<void>((r) => {
              waiters.push(r);
              setTimeout(r, 50);
            });
          }
          return got;
        },
      };
    }

    it('delivers a published event to a durable consumer with its id, subject, data and trace', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream, subjects: stream.subjects, handler: c.handler });
      const e = ev(subj('created'), 'hello');
      await b.publish(e);
      const [got] = await c.waitFor(1);
      expect(got!.id).toBe(e.id);
      expect(got!.subject).toBe(e.subject);
      expect(dec(got!.data)).toBe('hello');
      // The same trace, continued by the publish span.
      expect(got!.traceparent).toMatch(new RegExp(`^00-${'a'.repeat(32)}-[0-9a-f]{16}-01$`));
      expect(got!.deliveryCount).toBe(1);
      await sub.stop();
    });

    it('handlers run inside the trace of the event (its traceparent)', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      let seen: string | undefined;
      let done!: () => void;
      const got = new Promise<void>((r) => (done = r));
      const sub = b.consume({
        name: consumerName(),
        stream,
        subjects: stream.subjects,
        handler: async () => {
          seen = currentTrace()?.traceId;
          done();
        },
      });
      await b.publish(ev(subj('created'), 'traced'));
      await got;
      expect(seen).toBe('a'.repeat(32));
      await sub.stop();
    });

    it('stores an event published twice with the same id once', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream, subjects: stream.subjects, handler: c.handler });
      const e = ev(subj('created'), 'once');
      await b.publish(e);
      await b.publish(e);
      await b.publish(ev(subj('created'), 'marker'));
      await c.waitFor(2);
      await new Promise((r) => setTimeout(r, 200));
      expect(c.got.map((g) => dec(g.data))).toEqual(['once', 'marker']);
      await sub.stop();
    });

    it('filters by subject inside the stream', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream, subjects: [subj('created')], handler: c.handler });
      await b.publish(ev(subj('deleted'), 'skip'));
      await b.publish(ev(subj('created'), 'take'));
      await c.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(c.got.map((g) => dec(g.data))).toEqual(['take']);
      await sub.stop();
    });

    it('a consumer of several subjects gets exactly those', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream, subjects: [subj('created'), subj('deleted')], handler: c.handler });
      await b.publish(ev(subj('created'), 'one'));
      await b.publish(ev(subj('updated'), 'skip'));
      await b.publish(ev(subj('deleted'), 'two'));
      await c.waitFor(2);
      await new Promise((r) => setTimeout(r, 200));
      expect(c.got.map((g) => dec(g.data))).toEqual(['one', 'two']);
      await sub.stop();
    });

    it('a durable consumer resumes after a restart without losing or repeating acked events', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const first = collector();
      const sub1 = b.consume({ name: consumerName(), stream, subjects: stream.subjects, handler: first.handler });
      await b.publish(ev(subj('created'), 'one'));
      await first.waitFor(1);
      await sub1.stop();
      await b.publish(ev(subj('created'), 'two'));
      const second = collector();
      const sub2 = b.consume({ name: consumerName(), stream, subjects: stream.subjects, handler: second.handler });
      await second.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(second.got.map((g) => dec(g.data))).toEqual(['two']);
      await sub2.stop();
    });

    it('events published before the consumer first started are delivered', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      await b.publish(ev(subj('created'), 'early'));
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream, subjects: stream.subjects, handler: c.handler });
      await c.waitFor(1);
      expect(dec(c.got[0]!.data)).toBe('early');
      await sub.stop();
    });

    it('a failing handler gets the event again, with a growing delivery count', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const counts: number[] = [];
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const sub = b.consume({
        name: consumerName(),
        stream,
        subjects: stream.subjects,
        backoffMs: [50],
        maxDeliver: 5,
        handler: async (e) => {
          counts.push(e.deliveryCount);
          if (e.deliveryCount < 3) throw new Error('transient');
          done();
        },
      });
      await b.publish(ev(subj('created'), 'retry me'));
      await finished;
      expect(counts).toEqual([1, 2, 3]);
      await sub.stop();
    });

    it('after the last delivery the event goes to dead.<consumer> with the original subject and id', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const deadLetters = collector();
      const deadSub = b.consume({ name: `${consumerName()}-2`, stream: dead, subjects: [`dead.${consumerName()}`], handler: deadLetters.handler });
      let calls = 0;
      const sub = b.consume({
        name: consumerName(),
        stream,
        subjects: stream.subjects,
        backoffMs: [20],
        maxDeliver: 3,
        handler: async () => {
          calls++;
          throw new Error('always fails');
        },
      });
      const e = ev(subj('created'), 'poison');
      await b.publish(e);
      const [dl] = await deadLetters.waitFor(1, 8_000);
      expect(calls).toBe(3);
      expect(dec(dl!.data)).toBe('poison');
      expect(dl!.headers?.['Iam-Original-Subject']).toBe(e.subject);
      expect(dl!.headers?.['Iam-Original-Id']).toBe(e.id);
      expect(dl!.headers?.['Iam-Error']).toContain('always fails');
      await new Promise((r) => setTimeout(r, 200));
      expect(calls).toBe(3);
      await sub.stop();
      await deadSub.stop();
    });

    it('a PermanentEventError dead-letters at once', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      const deadLetters = collector();
      const deadSub = b.consume({ name: `${consumerName()}-2`, stream: dead, subjects: [`dead.${consumerName()}`], handler: deadLetters.handler });
      let calls = 0;
      const sub = b.consume({
        name: consumerName(),
        stream,
        subjects: stream.subjects,
        handler: async () => {
          calls++;
          throw new PermanentEventError('cannot decode');
        },
      });
      await b.publish(ev(subj('created'), 'bad'));
      await deadLetters.waitFor(1);
      expect(calls).toBe(1);
      await sub.stop();
      await deadSub.stop();
    });

    it('replicas sharing a durable name split the work: each event handled once', async () => {
      const b1 = bus();
      const b2 = bus();
      await b1.declareStreams([stream, dead]);
      await b2.declareStreams([stream, dead]);
      const seen: string[] = [];
      const handler = async (e: IncomingEvent): Promise<void> => void seen.push(dec(e.data));
      const s1 = b1.consume({ name: consumerName(), stream, subjects: stream.subjects, handler });
      const s2 = b2.consume({ name: consumerName(), stream, subjects: stream.subjects, handler });
      for (let i = 0; i < 20; i++) await b1.publish(ev(subj('created'), `m${i}`));
      const deadline = Date.now() + 5_000;
      while (seen.length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      await new Promise((r) => setTimeout(r, 200));
      expect([...seen].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`).sort());
      await s1.stop();
      await s2.stop();
    });

    it('maxAckPending 1: replicas handle one event at a time, in stream order, a retry holding the ones behind it', async () => {
      const b1 = bus();
      const b2 = bus();
      await b1.declareStreams([stream, dead]);
      await b2.declareStreams([stream, dead]);
      const done: string[] = [];
      let running = 0;
      let peak = 0;
      let failedOnce = false;
      const handler = async (e: IncomingEvent): Promise<void> => {
        running++;
        peak = Math.max(peak, running);
        try {
          await new Promise((r) => setTimeout(r, Math.random() * 10));
          if (dec(e.data) === 'o5' && !failedOnce) {
            failedOnce = true;
            throw new Error('first delivery fails');
          }
          done.push(dec(e.data));
        } finally {
          running--;
        }
      };
      const name = consumerName();
      const spec = { name, stream, subjects: stream.subjects, handler, concurrency: 4, maxAckPending: 1, backoffMs: [100] };
      const s1 = b1.consume(spec);
      const s2 = b2.consume(spec);
      for (let i = 0; i < 12; i++) await b1.publish(ev(subj('created'), `o${i}`));
      const deadline = Date.now() + 10_000;
      while (done.length < 12 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(done).toEqual(Array.from({ length: 12 }, (_, i) => `o${i}`));
      expect(peak).toBe(1);
      await s1.stop();
      await s2.stop();
    });

    it('bounds the handlers running at once to the concurrency', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      let running = 0;
      let peak = 0;
      let handled = 0;
      const sub = b.consume({
        name: consumerName(),
        stream,
        subjects: stream.subjects,
        concurrency: 2,
        handler: async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 30));
          running--;
          handled++;
        },
      });
      for (let i = 0; i < 8; i++) await b.publish(ev(subj('created'), `c${i}`));
      const deadline = Date.now() + 5_000;
      while (handled < 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(handled).toBe(8);
      expect(peak).toBeLessThanOrEqual(2);
      await sub.stop();
    });

    it('broadcast subscriptions: every subscriber gets every event', async () => {
      const b1 = bus();
      const b2 = bus();
      await b1.declareStreams([stream, dead]);
      const c1 = collector();
      const c2 = collector();
      const s1 = b1.subscribe([stream.subjects[0]!], c1.handler);
      const s2 = b2.subscribe([stream.subjects[0]!], c2.handler);
      await new Promise((r) => setTimeout(r, 300));
      const e = ev(subj('revoked'), 'to all');
      await b1.publish(e);
      expect((await c1.waitFor(1))[0]!.id).toBe(e.id);
      expect((await c2.waitFor(1))[0]!.id).toBe(e.id);
      await s1.stop();
      await s2.stop();
    });

    it('publishing to a subject no stream stores fails', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      await expect(b.publish(ev(`nostream${randomUUID().slice(0, 8)}.x`, 'lost'))).rejects.toThrow();
    });

    it('check() passes while connected and fails once closed', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      await expect(b.check()).resolves.toBeUndefined();
      await b.close();
      await expect(b.check()).rejects.toThrow();
    });

    it('a reconnect listener is not called while the connection holds, and removing it is safe', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      let calls = 0;
      const off = b.onReconnect(() => calls++);
      await b.publish(ev(subj('created'), 'steady'));
      await new Promise((r) => setTimeout(r, 200));
      off();
      off();
      expect(calls).toBe(0);
    });

    (factory?.interruptible ? it : it.skip)('after its connection drops, the bus calls its reconnect listeners once it can publish again', async () => {
      const { bus: b, interrupt, close } = await factory.interruptible!();
      try {
        await b.declareStreams([stream, dead]);
        const c = collector();
        const sub = b.consume({ name: consumerName(), stream, subjects: stream.subjects, handler: c.handler });
        await b.publish(ev(subj('created'), 'before'));
        await c.waitFor(1);
        // Publishing from the listener itself: the bus must be usable by the time it is called.
        const heard: Array<Promise<void>> = [];
        const off = b.onReconnect(() => void heard.push(b.publish(ev(subj('created'), `after-${heard.length + 1}`))));
        const cutAt = Date.now();
        interrupt();
        const deadline = Date.now() + 10_000;
        while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        expect(heard).toHaveLength(1);
        await heard[0];
        expect(Date.now() - cutAt).toBeLessThan(5_000);
        await c.waitFor(2);
        expect(dec(c.got[1]!.data)).toBe('after-1');
        // Removed: the next reconnect is not reported to it.
        off();
        interrupt();
        await new Promise((r) => setTimeout(r, 1_500));
        await b.publish(ev(subj('created'), 'last'));
        expect(heard).toHaveLength(1);
        await sub.stop();
      } finally {
        await b.close();
        await close();
      }
    });

    it('handlers that are running when a consumer stops finish before stop() resolves', async () => {
      const b = bus();
      await b.declareStreams([stream, dead]);
      let finished = false;
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const sub = b.consume({
        name: consumerName(),
        stream,
        subjects: stream.subjects,
        handler: async () => {
          started();
          await new Promise((r) => setTimeout(r, 150));
          finished = true;
        },
      });
      await b.publish(ev(subj('created'), 'slow'));
      await running;
      await sub.stop();
      expect(finished).toBe(true);
    });
  });
}
