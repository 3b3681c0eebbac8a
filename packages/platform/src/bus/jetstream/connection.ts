/**
 * The bus's one NATS connection. It is made in the background and retried forever: a process
 * starts (and reports not-ready) while NATS is down, and recovers without a restart when it
 * comes back. The connection's status events tell broadcast subscribers when events may have
 * been missed (liveness) and `onReconnect` listeners when publishing works again.
 */
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { credsAuthenticator, type NatsConnection, nkeyAuthenticator } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '../../logger';
import type { NatsConnectionConfig } from '../../runtime';

export interface Conn {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

export interface JetStreamConnectionOptions {
  readonly url: string;
  /** Connection name shown by the server (process name). */
  readonly name: string;
  readonly logger: Logger;
  readonly connection?: NatsConnectionConfig;
  /**
   * Run after every connect and reconnect, before the reconnect listeners (the streams are
   * declared again: a server that lost its store has them again). A failure on the first connect
   * makes it retry; after a reconnect it is logged.
   */
  readonly onConnect: (conn: Conn) => Promise<void>;
}

export class JetStreamConnection {
  private conn: Conn | undefined;
  private connecting: Promise<Conn> | undefined;
  private connected = false;
  private closed = false;
  /** Broadcast subscribers that want to know when events may have been missed. */
  private readonly liveListeners = new Set<(live: boolean) => void>();
  /** Told when publishing works again after the connection was lost (onReconnect). */
  private readonly reconnectListeners = new Set<() => void>();

  constructor(private readonly opts: JetStreamConnectionOptions) {}

  /** Whether the server is reachable now (false while disconnected or reconnecting). */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Whether the bus is closing or closed: nothing connects again. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The live connection; made on first use, retried until it succeeds or the bus is closed. */
  get(): Promise<Conn> {
    if (this.conn && !this.conn.nc.isClosed()) return Promise.resolve(this.conn);
    this.connecting ??= this.connectLoop().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connectLoop(): Promise<Conn> {
    let delay = 250;
    for (;;) {
      if (this.closed) throw new Error('event bus is closed');
      try {
        const c = this.opts.connection;
        const nc = await connect({
          servers: this.opts.url,
          name: this.opts.name,
          ...(c?.creds ? { authenticator: credsAuthenticator(c.creds) } : c?.nkeySeed ? { authenticator: nkeyAuthenticator(c.nkeySeed) } : {}),
          ...(c?.user ? { user: c.user, pass: c.password } : {}),
          ...(c?.caFile ? { tls: { caFile: c.caFile } } : {}),
          maxReconnectAttempts: -1,
          // A retry every 250 ms (plus up to 100 ms of jitter) while NATS is away: back within about
          // a third of a second of its return, so the outboxes drain in under a second. A refused
          // connection costs next to nothing, even from many processes.
          reconnectTimeWait: 250,
          pingInterval: 10_000,
          timeout: 2_000,
        });
        const conn: Conn = { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
        this.conn = conn;
        this.connected = true;
        this.opts.logger.info({ server: nc.getServer() }, 'connected to NATS');
        void this.watchStatus(nc);
        await this.opts.onConnect(conn);
        this.reconnected();
        return conn;
      } catch (err) {
        this.connected = false;
        this.opts.logger.warn({ err: (err as Error).message }, 'NATS connection failed; retrying');
        await sleep(delay);
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        this.opts.logger.warn('disconnected from NATS');
        // Core-NATS broadcasts published while away are lost for good.
        for (const l of this.liveListeners) l(false);
      } else if (s.type === 'reconnect') {
        this.connected = true;
        this.opts.logger.info('reconnected to NATS');
        // The client re-sends its subscriptions on reconnect; once the server has them, broadcasts flow again.
        void nc.flush().then(
          () => {
            for (const l of this.liveListeners) l(true);
          },
          () => undefined,
        );
        // Streams first, then whoever waits to publish.
        const redeclared = this.conn ? this.opts.onConnect(this.conn).catch((err: unknown) => this.opts.logger.warn({ err }, 're-declaring streams failed')) : Promise.resolve();
        void redeclared.then(() => this.reconnected());
      }
    }
    this.connected = false;
  }

  private reconnected(): void {
    for (const l of this.reconnectListeners) {
      try {
        l();
      } catch (err) {
        this.opts.logger.warn({ err }, 'reconnect listener failed');
      }
    }
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => void this.reconnectListeners.delete(listener);
  }

  /** Tells `listener` now whether the connection is up, then at every disconnect and reconnect; returns the remover. */
  onLive(listener: (live: boolean) => void): () => void {
    this.liveListeners.add(listener);
    listener(this.connected);
    return () => void this.liveListeners.delete(listener);
  }

  /** Throws unless connected, with a round trip to the server. */
  async check(): Promise<void> {
    const conn = this.conn;
    if (!conn || !this.connected || conn.nc.isClosed()) throw new Error('not connected to NATS');
    await conn.nc.rtt();
  }

  /** No connection is made any more (the first step of closing the bus). */
  stop(): void {
    this.closed = true;
  }

  /** Drains and closes the connection (the last step of closing the bus). */
  async drain(): Promise<void> {
    const conn = this.conn;
    if (conn && !conn.nc.isClosed()) {
      await conn.nc.drain().catch(() => conn.nc.close());
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
