/**
 * The webhook sender (undici's dispatch with a handler of its own) against a real local server:
 * the exact body and headers sent, the answer's first bytes and Retry-After kept, redirects never
 * followed, an endless answer cut, the hard timeout over the whole exchange (a slow drip of bytes
 * included), network errors, and the SSRF guard's refusals at connect time.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RESPONSE_KEPT_BYTES, type WebhookHttp, createWebhookHttp } from './http';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('webhook http', () => {
  let server: Server;
  let base: string;
  let handle: Handler = (_req, _body, res) => void res.writeHead(204).end();
  const seen: Array<{ path: string; headers: IncomingMessage['headers']; body: string }> = [];
  const open: WebhookHttp[] = [];
  const sender = (o: { allowPrivate?: boolean; timeoutMs?: number; resolve?: Parameters<typeof createWebhookHttp>[0]['resolve'] } = {}) => {
    const h = createWebhookHttp({ allowPrivate: o.allowPrivate ?? true, platformHosts: [], timeoutMs: o.timeoutMs ?? 5_000, ...(o.resolve ? { resolve: o.resolve } : {}) });
    open.push(h);
    return h;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ path: req.url ?? '', headers: req.headers, body });
        handle(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(open.map((h) => h.close()));
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('sends the exact body and headers, and keeps the status, Retry-After and the first bytes of the answer', async () => {
    handle = (_req, _body, res) => void res.writeHead(503, { 'retry-after': '7' }).end('x'.repeat(2_000));
    const body = JSON.stringify({ type: 'user.created', data: { name: 'Zoë ✓' } });
    const r = await sender().post(`${base}/hook?a=1`, { 'content-type': 'application/json', 'webhook-id': 'msg_1' }, body);
    expect(r).toMatchObject({ kind: 'response', status: 503, retryAfter: '7' });
    expect(r.kind === 'response' && r.body).toBe('x'.repeat(RESPONSE_KEPT_BYTES));
    expect(seen).toEqual([expect.objectContaining({ path: '/hook?a=1', body })]);
    expect(seen[0]!.headers['webhook-id']).toBe('msg_1');
  });

  it('never follows a redirect', async () => {
    handle = (req, _body, res) => void res.writeHead(req.url === '/from' ? 302 : 200, { location: '/to' }).end();
    const r = await sender().post(`${base}/from`, {}, '{}');
    expect(r).toMatchObject({ kind: 'response', status: 302 });
    expect(seen.map((s) => s.path)).toEqual(['/from']);
  });

  it('cuts an answer that does not end, keeping its first bytes', async () => {
    handle = (_req, _body, res) => {
      res.writeHead(200);
      const chunk = 'y'.repeat(16 * 1024);
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(chunk)), 5);
    };
    const r = await sender({ timeoutMs: 10_000 }).post(`${base}/long`, {}, '{}');
    expect(r).toMatchObject({ kind: 'response', status: 200 });
    expect(r.kind === 'response' && r.body).toBe('y'.repeat(RESPONSE_KEPT_BYTES));
  });

  it('times out over the whole exchange, a slow drip of bytes included', async () => {
    handle = (_req, _body, res) => {
      res.writeHead(200);
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write('.')), 50);
    };
    const drip = await sender({ timeoutMs: 400 }).post(`${base}/drip`, {}, '{}');
    expect(drip).toMatchObject({ kind: 'error', outcome: 'timeout' });
    handle = () => undefined; // never answers
    const silent = await sender({ timeoutMs: 400 }).post(`${base}/silent`, {}, '{}');
    expect(silent).toMatchObject({ kind: 'error', outcome: 'timeout' });
  });

  it('reports a connection refused as a network failure', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const r = await sender().post(`http://127.0.0.1:${port}/`, {}, '{}');
    expect(r).toMatchObject({ kind: 'error', outcome: 'network' });
  });

  it('refuses private addresses at connect time, by literal and by name, and sends nothing', async () => {
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    const h = sender({ allowPrivate: false, resolve });
    const literal = await h.post(`${base}/x`, {}, '{}');
    expect(literal).toMatchObject({ kind: 'error', outcome: 'refused', refusal: expect.objectContaining({ reason: 'loopback' }) });
    const named = await h.post(`http://rebind.test:${new URL(base).port}/x`, {}, '{}');
    expect(named).toMatchObject({ kind: 'error', outcome: 'refused', refusal: expect.objectContaining({ reason: 'loopback', address: '127.0.0.1' }) });
    expect(seen).toEqual([]);
  });
});
