import { createServer } from 'node:net';

/**
 * A loopback TCP port that was free a moment ago, for a test's own servers.
 *
 * Without a range the kernel picks one (port 0). With `range` (or `IAM_TEST_PORTS=from-to` in
 * the environment) the port is drawn from it: processes a test starts itself (PostgreSQL, NATS,
 * the system under test) take ports below 32768, because the kernel's ephemeral range hands the
 * same numbers to outgoing connections and they collide.
 */
export async function freePort(range?: readonly [number, number]): Promise<number> {
  const span = range ?? envRange();
  if (!span) return listenOn(0);
  const [from, to] = span;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    const taken = await listenOn(port).then(() => false, () => true);
    if (!taken) return port;
  }
  throw new Error(`no free port in ${from}-${to} after 50 attempts`);
}

function envRange(): [number, number] | undefined {
  const match = /^(\d+)-(\d+)$/.exec(process.env.IAM_TEST_PORTS ?? '');
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      server.close(() => resolve(bound));
    });
  });
}
