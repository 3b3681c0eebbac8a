#!/usr/bin/env node
/**
 * The webhook bench's receiver, a process of its own (so the dispatcher and the baseline do not
 * share its CPU with it): answers every POST 204 at once, and keeps for each the time it arrived
 * and the event's own timestamp (from the body). On stdin "count" it prints how many arrived,
 * "stats" all of them as one JSON line (only once the run is over: it is large).
 */
import { createServer } from 'node:http';

const arrivals: Array<[number, number, string]> = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const id = String(req.headers['webhook-id'] ?? '');
    let ts = 0;
    if (id) {
      try {
        ts = Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string }).timestamp);
      } catch {
        ts = 0;
      }
    }
    arrivals.push([at, ts, id]);
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof a === 'object' && a ? a.port : 0 })}\n`);
});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (line: string) => {
  for (const cmd of line.split('\n').filter(Boolean)) {
    if (cmd === 'stats') process.stdout.write(`${JSON.stringify(arrivals)}\n`);
    if (cmd === 'count') process.stdout.write(`${arrivals.length}\n`);
    if (cmd === 'reset') arrivals.length = 0;
    if (cmd === 'exit') process.exit(0);
  }
});
