/**
 * A tiny authoritative DNS server for tests: answers A queries for the names it is given with
 * the addresses set now (changeable while it runs, as a headless Service's endpoints change), and
 * NODATA for everything else. Loopback addresses 127.0.0.x stand for pods: Linux routes all of
 * 127/8 to lo, so each process binds its own address on the same port, as pods do.
 *
 * Importing this module makes grpc-js resolve `dns://<server>/<name>:<port>` targets with that
 * server (GRPC_NODE_USE_ALTERNATIVE_RESOLVER, read when grpc-js loads): import it first.
 */
import { type Socket, createSocket } from 'node:dgram';

process.env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER = 'true';

export interface TestDnsServer {
  readonly port: number;
  /** Queries answered so far (a client re-resolving shows here). */
  readonly queries: number;
  set(name: string, addresses: readonly string[]): void;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const records = new Map<string, readonly string[]>();
  let queries = 0;
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    if (msg.length < 12) return;
    // Question: labels, then QTYPE and QCLASS.
    let i = 12;
    const labels: string[] = [];
    while (i < msg.length && msg[i] !== 0) {
      const len = msg[i]!;
      labels.push(msg.subarray(i + 1, i + 1 + len).toString('ascii'));
      i += len + 1;
    }
    const qEnd = i + 5;
    const qtype = msg.readUInt16BE(i + 1);
    const name = labels.join('.').toLowerCase();
    queries++;
    const addrs = qtype === 1 ? (records.get(name) ?? []) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // id
    header.writeUInt16BE(0x8400 | (records.has(name) ? 0 : 3), 2); // response, authoritative; NXDOMAIN for unknown names
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addrs.length, 6);
    const answers = addrs.map((a) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(0, 6); // TTL 0: nothing caches it
      rr.writeUInt16BE(4, 10);
      a.split('.').forEach((o, k) => rr.writeUInt8(Number(o), 12 + k));
      return rr;
    });
    socket.send(Buffer.concat([header, msg.subarray(12, qEnd), ...answers]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    port: socket.address().port,
    get queries() {
      return queries;
    },
    set: (name, addresses) => void records.set(name.toLowerCase(), [...addresses]),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
