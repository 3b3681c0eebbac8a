/// <reference types="jest" />
/**
 * The event-bus contract's failure cases: a failing handler gets the event again with a growing
 * delivery count (after its own delay when it throws RetryLaterError), dead letters after the last
 * delivery or a PermanentEventError, and reconnect listeners (called, for a bus with a broker,
 * once it can publish again after its connection dropped).
 */
import { type DurableConsumerSpec, type IncomingEvent, PermanentEventError, RetryLaterError } from '../bus/port';
import { type ContractWorld, collector, dec } from './bus-contract-world';

type Retries = Pick<DurableConsumerSpec, 'backoffMs' | 'maxDeliver'>;

export function failureCases(w: ContractWorld): void {
  const { bus, subj, consumerName, ev, factory } = w;

  /** A bus consuming this test's stream with `handler`, and what reaches its dead-letter subject. */
  const consuming = async (handler: (e: IncomingEvent) => void, retries: Retries) => {
    const b = bus();
    await b.declareStreams([w.stream, w.dead]);
    const dead = collector();
    const deadSub = b.consume({ name: `${consumerName()}-2`, stream: w.dead, subjects: [`dead.${consumerName()}`], handler: dead.handler });
    const sub = b.consume({ name: consumerName(), stream: w.stream, subjects: w.stream.subjects, ...retries, handler: async (e) => handler(e) });
    return {
      b,
      deadLetters: dead,
      stop: async () => {
        await sub.stop();
        await deadSub.stop();
      },
    };
  };

  /** Publishes one event to a handler that throws until it returns true; resolves with the deliveries' counts and times. */
  const deliverUntil = async (handle: (e: IncomingEvent) => boolean, retries: Retries) => {
    const seen: Array<{ count: number; at: number }> = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const c = await consuming((e) => {
      seen.push({ count: e.deliveryCount, at: Date.now() });
      if (handle(e)) done();
    }, retries);
    await c.b.publish(ev(subj('created'), 'retry me'));
    await finished;
    await c.stop();
    return seen;
  };

  it('a failing handler gets the event again, with a growing delivery count', async () => {
    const seen = await deliverUntil((e) => {
      if (e.deliveryCount < 3) throw new Error('transient');
      return true;
    }, { backoffMs: [50], maxDeliver: 5 });
    expect(seen.map((s) => s.count)).toEqual([1, 2, 3]);
  });

  it('a RetryLaterError brings the event again after its own delay, not the backoff', async () => {
    const seen = await deliverUntil((e) => {
      if (e.deliveryCount === 1) throw new RetryLaterError('another attempt may be running', 600);
      return true;
    }, { backoffMs: [20], maxDeliver: 5 });
    expect(seen.map((s) => s.count)).toEqual([1, 2]);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(550);
  });

  it('after the last delivery the event goes to dead.<consumer> with the original subject and id', async () => {
    let calls = 0;
    const c = await consuming(() => {
      calls++;
      throw new Error('always fails');
    }, { backoffMs: [20], maxDeliver: 3 });
    const e = ev(subj('created'), 'poison');
    await c.b.publish(e);
    const [dl] = await c.deadLetters.waitFor(1, 8_000);
    expect(calls).toBe(3);
    expect(dec(dl!.data)).toBe('poison');
    expect(dl!.headers?.['Iam-Original-Subject']).toBe(e.subject);
    expect(dl!.headers?.['Iam-Original-Id']).toBe(e.id);
    expect(dl!.headers?.['Iam-Error']).toContain('always fails');
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(3);
    await c.stop();
  });

  it('a PermanentEventError dead-letters at once', async () => {
    let calls = 0;
    const c = await consuming(() => {
      calls++;
      throw new PermanentEventError('cannot decode');
    }, {});
    await c.b.publish(ev(subj('created'), 'bad'));
    await c.deadLetters.waitFor(1);
    expect(calls).toBe(1);
    await c.stop();
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
