/// <reference types="jest" />
/**
 * The event-bus contract's failure cases: a failing handler gets the event again with a growing
 * delivery count (after its own delay when it throws RetryLaterError), dead letters after the last
 * delivery or a PermanentEventError, and reconnect listeners (called, for a bus with a broker,
 * once it can publish again after its connection dropped).
 */
import { PermanentEventError, RetryLaterError } from '../bus/port';
import { type ContractWorld, collector, dec } from './bus-contract-world';

export function failureCases(w: ContractWorld): void {
  const { bus, subj, consumerName, ev, factory } = w;

    it('a failing handler gets the event again, with a growing delivery count', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const counts: number[] = [];
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
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

    it('a RetryLaterError brings the event again after its own delay, not the backoff', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const at: number[] = [];
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
        backoffMs: [20],
        maxDeliver: 5,
        handler: async (e) => {
          at.push(Date.now());
          if (e.deliveryCount === 1) throw new RetryLaterError('another attempt may be running', 600);
          done();
        },
      });
      await b.publish(ev(subj('created'), 'later'));
      await finished;
      expect(at).toHaveLength(2);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(550);
      await sub.stop();
    });

    it('after the last delivery the event goes to dead.<consumer> with the original subject and id', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      const deadLetters = collector();
      const deadSub = b.consume({ name: `${consumerName()}-2`, stream: w.dead, subjects: [`dead.${consumerName()}`], handler: deadLetters.handler });
      let calls = 0;
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
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
      await b.declareStreams([w.stream, w.dead]);
      const deadLetters = collector();
      const deadSub = b.consume({ name: `${consumerName()}-2`, stream: w.dead, subjects: [`dead.${consumerName()}`], handler: deadLetters.handler });
      let calls = 0;
      const sub = b.consume({
        name: consumerName(),
        stream: w.stream,
        subjects: w.stream.subjects,
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

    it('a reconnect listener is not called while the connection holds, and removing it is safe', async () => {
      const b = bus();
      await b.declareStreams([w.stream, w.dead]);
      let calls = 0;
      const off = b.onReconnect(() => calls++);
      await b.publish(ev(subj('created'), 'steady'));
      await new Promise((r) => setTimeout(r, 200));
      off();
      off();
      expect(calls).toBe(0);
    });

    (factory.interruptible ? it : it.skip)('after its connection drops, the bus calls its reconnect listeners once it can publish again', async () => {
      const { bus: b, interrupt, close } = await factory.interruptible!();
      try {
        await b.declareStreams([w.stream, w.dead]);
        const c = collector();
        const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, handler: c.handler });
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
}
