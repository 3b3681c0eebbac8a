/**
 * A TCP fault proxy for the fault suite: passes bytes through, or adds latency, resets every
 * connection (RST), or blackholes (stops forwarding; the peers see silence, as in a partition).
 * The mode applies to open connections too.
 */
import { type Server, type Socket, createServer, connect } from 'node:net';
import { freePort } from '../support/nats';

export type Fault = { kind: 'pass' } | { kind: 'latency'; ms: number } | { kind: 'reset' } | { kind: 'blackhole' };

export class FaultProxy {
  private fault: Fault = { kind: 'pass' };
  private readonly pairs = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<FaultProxy> {
    const ref: { proxy?: FaultProxy } = {};
    const server = createServer((client) => ref.proxy?.accept(client, targetPort));
    // Below the ephemeral range, as the suite's other servers (support/nats.ts freePort).
    const port = await freePort();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    ref.proxy = new FaultProxy(server, (server.address() as { port: number }).port);
    return ref.proxy;
  }

  set(fault: Fault): void {
    this.fault = fault;
    for (const pair of this.pairs) {
      if (fault.kind === 'reset') {
        for (const s of pair) s.resetAndDestroy();
      } else if (fault.kind === 'blackhole') {
        for (const s of pair) s.pause();
      } else {
        for (const s of pair) s.resume();
      }
    }
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.fault.kind === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        const f = this.fault;
        if (f.kind === 'latency') setTimeout(() => to.writable && to.write(chunk), f.ms);
        else if (to.writable) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    if (this.fault.kind === 'blackhole') for (const s of pair) s.pause();
    const close = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) for (const s of pair) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
