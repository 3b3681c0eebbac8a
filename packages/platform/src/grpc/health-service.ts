/**
 * The standard grpc.health.v1 service (`grpc-health-check`) every gRPC server registers, following
 * a HealthMonitor.
 */
import type * as grpc from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import type { HealthMonitor } from '../health';
import type { ServiceRegistry } from './in-process';

/**
 * The standard health service (`grpc-health-check`). Service "" is the whole process; every
 * HealthMonitor check is also a service name of its own (e.g. "db", "bus"), so callers can tell
 * what is down. Watch streams get the current status at once and then only changes; at shutdown
 * every status turns NOT_SERVING and the streams end.
 */
export class GrpcHealth {
  private readonly impl = new HealthImplementation({ '': 'NOT_SERVING' });
  private readonly statuses = new Map<string, ServingStatus>([['', 'NOT_SERVING']]);
  private readonly watches = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  private shuttingDown = false;
  private ended = false;

  follow(monitor: HealthMonitor): void {
    monitor.onChange((s) => {
      for (const [name, st] of Object.entries(s.checks)) this.set(name, st === 'up');
      this.set('', s.ready);
    });
  }

  /** From now on every service is NOT_SERVING (graceful shutdown). */
  drain(): void {
    this.shuttingDown = true;
    for (const name of this.statuses.keys()) this.set(name, false);
  }

  private set(service: string, serving: boolean): void {
    if (this.ended) return;
    const st: ServingStatus = serving && !this.shuttingDown ? 'SERVING' : 'NOT_SERVING';
    if (this.statuses.get(service) === st) return;
    this.statuses.set(service, st);
    this.impl.setStatus(service, st);
  }

  /** Registers grpc.health.v1.Health on `server`, keeping hold of Watch streams to end them at shutdown. */
  addToServer(server: ServiceRegistry): void {
    this.impl.addToServer({
      addService: (definition, implementation) => {
        const watch = implementation.watch as unknown as grpc.handleServerStreamingCall<unknown, unknown>;
        server.addService(definition, {
          ...(implementation as unknown as grpc.UntypedServiceImplementation),
          watch: (call: grpc.ServerWritableStream<unknown, unknown>) => {
            this.watches.add(call);
            const forget = (): void => void this.watches.delete(call);
            call.on('cancelled', forget);
            call.on('close', forget);
            watch(call);
          },
        });
      },
    });
  }

  endWatches(): void {
    this.ended = true;
    for (const w of this.watches) w.end();
    this.watches.clear();
  }
}

/** Name of the health service (reflection lists it). */
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';

