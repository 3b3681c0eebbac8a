/**
 * How `make run` writes its logs. `pretty` (the default on a terminal): one short line per entry,
 * `14:39:53.153 INFO  gateway: request …`, through pino-pretty in the same thread (a line is out
 * before the process exits). `json` (the default when stdout is a file or a pipe, and what every
 * container writes): pino's JSON lines, the same as production. Redaction is the logger's either
 * way: the formatter only sees what is already redacted.
 */
import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function defaultLogFormat(): LogFormat {
  return process.stdout.isTTY ? 'pretty' : 'json';
}

/** The destination for `createLogger`; undefined: its default (JSON to stdout). */
export function logDestination(format: LogFormat, stream: NodeJS.WritableStream = process.stdout): DestinationStream | undefined {
  if (format === 'json') return undefined;
  return pretty({
    destination: stream,
    sync: true,
    colorize: 'isTTY' in stream && stream.isTTY === true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,component',
    messageFormat: '{if component}{component}: {end}{msg}',
  });
}
