/// <reference types="jest" />
/**
 * The world each case of the event-bus contract runs in: the factory of the adapter under test,
 * fresh streams per test, buses closed after it, events, and a collector of what a handler got.
 */
import { randomUUID } from 'node:crypto';
import type { StreamSpec } from '@iam/contracts';
import type { EventBus, IncomingEvent, OutgoingEvent } from '../bus/port';

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

export interface ContractWorld {
  readonly factory: BusFactory;
  /** The first call in a test creates a bus, later ones its peers (other replicas). */
  readonly bus: () => EventBus;
  /** This test's stream, and the one for its dead letters. */
  readonly stream: StreamSpec;
  readonly dead: StreamSpec;
  readonly subj: (verb: string) => string;
  readonly consumerName: () => string;
  readonly ev: (subject: string, body: string, id?: string) => OutgoingEvent;
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Registers the hooks that keep the world (call inside a describe). */
export function contractWorld(factory: BusFactory): ContractWorld {
  const buses: EventBus[] = [];
  let first: EventBus | undefined;
  let stream!: StreamSpec;
  let dead!: StreamSpec;

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

  return {
    factory,
    bus: () => {
      const b = first ? factory.peer(first) : (first = factory.create());
      buses.push(b);
      return b;
    },
    get stream() {
      return stream;
    },
    get dead() {
      return dead;
    },
    subj: (verb) => `${stream.subjects[0]!.replace('>', '')}thing.${verb}`,
    consumerName: () => `${stream.subjects[0]!.replace('.>', '')}-consumer`,
    ev: (subject, body, id = randomUUID()) => ({ id, subject, data: enc(body), occurredAt: new Date(), traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` }),
  };
}

export function collector() {
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
