#!/usr/bin/env node
/**
 * The webhook bench's receiver, a process of its own (so the dispatcher and the baseline do not
 * share its CPU with it): answers every POST 204 at once, and keeps for each the time it arrived
 * and its body; the event's own timestamp is read from the body only when the stats are asked
 * for, so a webhook delivery costs the receiver what a baseline POST costs it. On stdin "count" it prints how many arrived,
 * "stats" all of them as one JSON line (only once the run is over: it is large).
 */
import { createServer } from 'node:http';

const arrivals: Array<[number, string, Buffer | undefined]> = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const id = req.headers['webhook-id'];
    arrivals.push([Date.now(), typeof id === 'string' ? id : '', id ? (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)) : undefined]);
    res.writeHead(204).end();
  });
});
/** The event's own timestamp (ms) from a delivery's body; 0 for a baseline POST. */
const timestampOf = (body: Buffer | undefined): number => {
  if (!body) return 0;
  try {
    return Date.parse((JSON.parse(body.toString('utf8')) as { timestamp: string }).timestamp);
  } catch {
    return 0;
  }
};
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof a === 'object' && a ? a.port : 0 })}\n`);
});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (line: string) => {
  for (const cmd of line.split('\n').filter(Boolean)) {
    if (cmd === 'stats') process.stdout.write(`${JSON.stringify(arrivals.map(([at, id, body]) => [at, timestampOf(body), id]))}\n`);
    if (cmd === 'count') process.stdout.write(`${arrivals.length}\n`);
    if (cmd === 'reset') arrivals.length = 0;
    if (cmd === 'exit') process.exit(0);
  }
});
