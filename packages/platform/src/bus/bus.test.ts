import { InMemoryEventBus } from './memory';
import { JetStreamEventBus } from './jetstream';
import { subjectMatches } from './port';
import { TcpRelay, deleteNamespaceStreams, runEventBusContract, testLogger, testMetrics, testNatsUrl, uniqueName } from '../testing';

runEventBusContract('in-process adapter', () => ({
  create: () => new InMemoryEventBus({ logger: testLogger(), metrics: testMetrics() }),
  peer: (of) => of,
}));

runEventBusContract('NATS JetStream adapter', () => {
  const url = testNatsUrl();
  if (!url) return undefined;
  const namespaces: string[] = [];
  const make = (namespace: string) => new JetStreamEventBus({ url, name: 'contract-test', namespace, logger: testLogger(), metrics: testMetrics() });
  return {
    create: () => {
      const ns = uniqueName('t');
      namespaces.push(ns);
      return make(ns);
    },
    peer: (of) => make((of as JetStreamEventBus).namespace),
    cleanup: async () => {
      for (const ns of namespaces) await deleteNamespaceStreams(url, ns);
    },
    // Through a relay whose connections can be cut: the shared server stays up for everyone else.
    interruptible: async () => {
      const server = new URL(url);
      const relay = await TcpRelay.start({ host: server.hostname, port: Number(server.port || 4222) });
      const ns = uniqueName('t');
      namespaces.push(ns);
      const bus = new JetStreamEventBus({ url: `nats://127.0.0.1:${relay.port}`, name: 'contract-test', namespace: ns, logger: testLogger(), metrics: testMetrics() });
      return { bus, interrupt: () => relay.cut(), close: () => relay.close() };
    },
  };
});

describe('subjectMatches', () => {
  it.each([
    ['a.b.c', 'a.b.c', true],
    ['a.*.c', 'a.b.c', true],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['a.*', 'a.b.c', false],
    ['a.b', 'a.b.c', false],
    ['dead.x', 'dead.x', true],
  ])('%s ~ %s → %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});
