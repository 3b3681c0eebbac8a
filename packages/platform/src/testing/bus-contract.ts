/// <reference types="jest" />
/**
 * The contract every EventBus adapter passes: publish/consume round trip, deduplication by id,
 * durable consumers sharing work and resuming after a restart, broadcast subscriptions, trace
 * headers, reading what a stream holds; and its failure cases (bus-contract-failures.ts):
 * redelivery with backoff or when the handler asks, dead letters, reconnects.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingEvent } from '../bus/port';
import { currentTrace } from '../trace';
import { eventually } from './index';
import { failureCases } from './bus-contract-failures';
import { type BusFactory, collector, contractWorld, dec } from './bus-contract-world';

export type { BusFactory } from './bus-contract-world';

export function runEventBusContract(name: string, makeFactory: () => BusFactory | undefined): void {
  const factoryOrSkip = makeFactory();
  const d = factoryOrSkip ? describe : describe.skip;
  d(`EventBus contract: ${name}`, () => {
    const w = contractWorld(factoryOrSkip!);
    const { bus, subj, consumerName, ev } = w;

    it('delivers a published event to a durable consumer with its id, subject, data and trace', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: c.handler });
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
      await b.declareStreams([w.stream, w.dead]);
      let seen: string | undefined;
      let done!: () => void;
      const got = new Promise<void>((r) => (done = r));
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
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

    it("a durable consumer's backlog counts what it has yet to finish: undelivered and unacknowledged", async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const c = collector();
      const spec = { name: consumerName(), stream: w.stream, subjects: w.stream.subjects };
      const sub = b.consume({ ...spec, maxAckPending: 2, concurrency: 2, handler: async (e) => (await held, c.handler(e)) });
      for (let i = 0; i < 5; i++) await b.publish(ev(subj('created'), `lag-${i}`));
      // Two delivered and held, three waiting behind them.
      await eventually(async () => (await b.consumerBacklog(spec)) === 5, 10_000, 50);
      release();
      await c.waitFor(5);
      await eventually(async () => (await b.consumerBacklog(spec)) === 0, 10_000, 50);
      await sub.stop();
    });

    it('stores an event published twice with the same id once', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: c.handler });
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
      await b.declareStreams([w.stream, w.dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: [subj('created')], handler: c.handler });
      await b.publish(ev(subj('deleted'), 'skip'));
      await b.publish(ev(subj('created'), 'take'));
      await c.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(c.got.map((g) => dec(g.data))).toEqual(['take']);
      await sub.stop();
    });

    it('a consumer of several subjects gets exactly those', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: [subj('created'), subj('deleted')], handler: c.handler });
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
      await b.declareStreams([w.stream, w.dead]);
      const first = collector();
      const sub1 = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: first.handler });
      await b.publish(ev(subj('created'), 'one'));
      await first.waitFor(1);
      await sub1.stop();
      await b.publish(ev(subj('created'), 'two'));
      const second = collector();
      const sub2 = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: second.handler });
      await second.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(second.got.map((g) => dec(g.data))).toEqual(['two']);
      await sub2.stop();
    });

    it('a durable consumer restarted with other subjects gets exactly the new ones', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const name = consumerName();
      const first = collector();
      const sub1 = b.consume({ name, stream: w.stream, subjects: [subj('created')], handler: first.handler });
      await b.publish(ev(subj('created'), 'one'));
      await first.waitFor(1);
      await sub1.stop();
      // A release changes what the consumer reads: one other subject, then several.
      const second = collector();
      const sub2 = b.consume({ name, stream: w.stream, subjects: [subj('deleted')], handler: second.handler });
      await b.publish(ev(subj('created'), 'skip'));
      await b.publish(ev(subj('deleted'), 'two'));
      await second.waitFor(1);
      await sub2.stop();
      const third = collector();
      const sub3 = b.consume({ name, stream: w.stream, subjects: [subj('deleted'), subj('updated')], handler: third.handler });
      await b.publish(ev(subj('updated'), 'three'));
      await third.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      expect([...second.got, ...third.got].map((g) => dec(g.data))).toEqual(['two', 'three']);
      await sub3.stop();
    });

    it('events published before the consumer first started are delivered', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      await b.publish(ev(subj('created'), 'early'));
      const c = collector();
      const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: c.handler });
      await c.waitFor(1);
      expect(dec(c.got[0]!.data)).toBe('early');
      await sub.stop();
    });

    it('replicas sharing a durable name split the work: each event handled once', async () => {
      const b1 = bus();
      const b2 = bus();
      await b1.declareStreams([w.stream, w.dead]);
      await b2.declareStreams([w.stream, w.dead]);
      const seen: string[] = [];
      const handler = async (e: IncomingEvent): Promise<void> => void seen.push(dec(e.data));
      const s1 = b1.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler });
      const s2 = b2.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler });
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
      await b1.declareStreams([w.stream, w.dead]);
      await b2.declareStreams([w.stream, w.dead]);
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
      const spec = { name, stream: w.stream, subjects: w.stream.subjects, handler, concurrency: 4, maxAckPending: 1, backoffMs: [100] };
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
      await b.declareStreams([w.stream, w.dead]);
      let running = 0;
      let peak = 0;
      let handled = 0;
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
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
      await b1.declareStreams([w.stream, w.dead]);
      const c1 = collector();
      const c2 = collector();
      const s1 = b1.subscribe([w.stream.subjects[0]!], c1.handler);
      const s2 = b2.subscribe([w.stream.subjects[0]!], c2.handler);
      await new Promise((r) => setTimeout(r, 300));
      const e = ev(subj('revoked'), 'to all');
      await b1.publish(e);
      expect((await c1.waitFor(1))[0]!.id).toBe(e.id);
      expect((await c2.waitFor(1))[0]!.id).toBe(e.id);
      await s1.stop();
      await s2.stop();
    });

    it('read: what a stream holds, oldest first, each id once; the newest `limit`; [] when empty; the same from another instance', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      expect(await b.read(w.stream)).toEqual([]);
      const events = [0, 1, 2, 3, 4].map((i) => ev(subj(i % 2 ? 'created' : 'deleted'), `r${i}`));
      for (const e of events) await b.publish(e);
      await b.publish(events[1]!);
      const all = await b.read(w.stream);
      expect(all.map((e) => [e.id, e.subject, dec(e.data)])).toEqual(events.map((e) => [e.id, e.subject, dec(e.data)]));
      expect(all.every((e) => e.deliveryCount === 1 && e.occurredAt instanceof Date)).toBe(true);
      expect((await b.read(w.stream, { limit: 2 })).map((e) => dec(e.data))).toEqual(['r3', 'r4']);
      expect((await b.read(w.stream, { limit: 50 })).length).toBe(5);
      expect((await bus().read(w.stream)).map((e) => e.id)).toEqual(events.map((e) => e.id));
    });

    it('publishing to a subject no stream stores fails', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      await expect(b.publish(ev(`nostream${randomUUID().slice(0, 8)}.x`, 'lost'))).rejects.toThrow();
    });

    it('check() passes while connected and fails once closed', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      await expect(b.check()).resolves.toBeUndefined();
      await b.close();
      await expect(b.check()).rejects.toThrow();
    });

    it('handlers that are running when a consumer stops finish before stop() resolves', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      let finished = false;
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
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

    it('a consumer stopped at once, before it has started consuming, stops', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: async () => undefined });
      await expect(Promise.race([sub.stop().then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still running'), 5_000))])).resolves.toBe('stopped');
    });

    failureCases(w);
  });
}
