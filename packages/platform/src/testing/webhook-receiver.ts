/**
 * A webhook receiver for tests: a real HTTP server on loopback that keeps every request (headers
 * and the raw body, byte for byte) and answers as the test says (`respond`: a status, headers, a
 * body; a delay). What arrived can be read in arrival order, by webhook-id.
 */
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly receivedAt: number;
  /** webhook-id */
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
}

export interface ReceiverAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Wait this long before answering (ms). */
  readonly delayMs?: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly received: ReceivedWebhook[];
  /** How each request is answered (default 204); change it at any time. */
  respond: (r: ReceivedWebhook) => ReceiverAnswer;
  /** Distinct webhook-ids received so far. */
  ids(): Set<string>;
  /** Requests in flight now, and the most there ever were at once for one webhook-id at one path. */
  readonly inFlight: { now: number; maxPerId: number };
  close(): Promise<void>;
}

export async function startWebhookReceiver(respond: (r: ReceivedWebhook) => ReceiverAnswer = () => ({ status: 204 })): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const perId = new Map<string, number>();
  const inFlight = { now: 0, maxPerId: 0 };
  const receiver: WebhookReceiver = {
    origin: '',
    received,
    respond,
    ids: () => new Set(received.map((r) => r.id)),
    inFlight,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const h = (n: string) => String(req.headers[n] ?? '');
      const r: ReceivedWebhook = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now(), id: h('webhook-id'), timestamp: h('webhook-timestamp'), signature: h('webhook-signature') };
      received.push(r);
      inFlight.now++;
      const key = `${r.path} ${r.id}`;
      const n = (perId.get(key) ?? 0) + 1;
      perId.set(key, n);
      inFlight.maxPerId = Math.max(inFlight.maxPerId, n);
      const answer = receiver.respond(r);
      const finish = () => {
        inFlight.now--;
        perId.set(key, (perId.get(key) ?? 1) - 1);
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(finish, answer.delayMs);
      else finish();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (receiver as { origin: string }).origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
