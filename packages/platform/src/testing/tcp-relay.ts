/**
 * A TCP relay in front of a server (NATS) whose connections a test can cut while the server stays
 * up: the client sees its connection drop and reconnects through the relay, as after a restart of
 * the server or a network blip, without disturbing the other tests on the shared server.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

export class TcpRelay {
  private readonly sockets = new Set<Socket>();

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

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    const upstream = connect(target);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined).on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
