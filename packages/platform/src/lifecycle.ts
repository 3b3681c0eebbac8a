/**
 * Graceful shutdown: closers run in reverse order of registration (stop taking work first,
 * close pools last), bounded by a timeout; SIGINT / SIGTERM start it once.
 */
import type { Logger } from './logger';

type Closer = { name: string; close: () => Promise<void> | void };

export class Lifecycle {
  private readonly closers: Closer[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logger: Logger, private readonly timeoutMs = 10_000) {}

  /** Registers something to close at shutdown; the last registered closes first. */
  onShutdown(name: string, close: () => Promise<void> | void): void {
    this.closers.push({ name, close });
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  shutdown(reason: string): Promise<void> {
    this.stopping ??= this.run(reason);
    return this.stopping;
  }

  private async run(reason: string): Promise<void> {
    this.logger.info({ reason }, 'shutting down');
    const deadline = Date.now() + this.timeoutMs;
    for (const c of [...this.closers].reverse()) {
      const left = Math.max(deadline - Date.now(), 100);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(c.close),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out')), left);
          }),
        ]);
      } catch (err) {
        this.logger.warn({ component: c.name, err: (err as Error).message }, 'shutdown step failed');
      } finally {
        clearTimeout(timer);
      }
    }
    this.logger.info('stopped');
  }

  /** SIGINT/SIGTERM → shutdown → exit; a second signal exits at once. */
  installSignalHandlers(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onSignal = (sig: NodeJS.Signals): void => {
      if (this.stopping) {
        this.logger.warn({ signal: sig }, 'second signal; exiting now');
        exit(130);
        return;
      }
      void this.shutdown(sig).then(() => exit(0));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
}

/** Prints a start-up failure (config or otherwise) and exits non-zero. */
export function exitOnStartupError(err: unknown, logger?: Logger): never {
  if (err instanceof Error && err.name === 'ConfigError') {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  if (logger) logger.fatal({ err }, 'start-up failed');
  else process.stderr.write(`start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
}
