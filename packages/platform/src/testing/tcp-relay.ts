/**
 * A TCP relay in front of a server (NATS, PostgreSQL) whose connections a test can cut while the
 * server stays up: the client sees its connection drop and reconnects through the relay, as after
 * a restart of the server or a network blip, without disturbing the other tests on the shared
 * server. It can also blackhole them (nothing passes either way and nothing is closed, as in a
 * network partition) and let them through again.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

export class TcpRelay {
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private silent = false;

  private constructor(
    private readonly server: Server,
    /** Where clients connect (127.0.0.1). */
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpRelay> {
    const ref: { relay?: TcpRelay } = {};
    const server = createServer((client) => ref.relay?.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ref.relay = new TcpRelay(server, (server.address() as { port: number }).port);
    return ref.relay;
  }

  /** Closes every open connection; new ones are relayed again at once. */
  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** Stops (true) or restarts (false) the bytes of every connection, open or new, both ways. */
  blackhole(on: boolean): void {
    this.silent = on;
    for (const pair of this.pairs) this.flow(pair, !on);
  }

  private flow([client, upstream]: [Socket, Socket], on: boolean): void {
    if (on) {
      client.pipe(upstream);
      upstream.pipe(client);
    } else {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    const upstream = connect(target);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    for (const s of pair) {
      this.sockets.add(s);
      s.on('error', () => undefined).on('close', () => {
        this.sockets.delete(s);
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    this.flow(pair, !this.silent);
  }
}
