/**
 * Structured JSON logs (pino); a line written inside a span carries its `traceId` and `spanId`
 * (OpenTelemetry's active span). Secrets are redacted by path and
 * callers never log tokens, passwords or links that embed them.
 */
import pino, { type Logger, type LevelWithSilent } from 'pino';
import { activeSpanIds } from './trace';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const REDACT = [
  'password',
  'newPassword',
  'token',
  'accessToken',
  'refreshToken',
  'sealedToken',
  'authorization',
  '*.password',
  '*.newPassword',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.sealedToken',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
];

export interface LoggerOptions {
  level: LevelWithSilent;
  /** Name of the process or component (`service` field). */
  service: string;
  /** Destination stream; defaults to stdout. */
  destination?: pino.DestinationStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        return activeSpanIds() ?? {};
      },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
