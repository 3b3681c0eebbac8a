/**
 * The in-process transport: a client whose target is `in-process:<name>` calls the services a
 * server registered under that name in this process directly, as gRPC's in-process transport does
 * in Java and .NET, without a socket, HTTP/2 framing or an event-loop round trip. Only the
 * all-in-one process selects it (DESIGN §1); separate processes always use gRPC.
 *
 * Everything above the wire stays the same: the client builds the same metadata (signed call
 * assertion, client IP, user agent, traceparent) and the same deadline; the server runs the same
 * wrapped handler (bindService: assertion check, server span, request context, query deadline,
 * metrics) and answers with the same status and error metadata (toStatus), which the client maps
 * back with the same fromServiceError. Requests and responses cross serialized, as on the wire, so
 * the handler sees exactly what it would over gRPC (defaults filled, no shared objects). The
 * handler runs in a fresh async context (nothing of the caller's AsyncLocalStorage reaches it but
 * what the metadata carries). The deadline is enforced on the client as grpc-js does
 * (DEADLINE_EXCEEDED when it passes; the handler's queries are bounded by it on the server side),
 * and idempotent methods are retried on UNAVAILABLE with the channel's retry policy.
 *
 * An in-process call carries no TLS peer certificate: a server with GRPC_TLS_PEER_NAMES refuses
 * it. The all-in-one composition root sets none (its components share one process).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import * as grpc from '@grpc/grpc-js';
import type { ServiceDef } from './types';

export const IN_PROCESS_SCHEME = 'in-process:';

/** Whether `target` names an in-process server (`in-process:<name>`). */
export function isInProcessTarget(target: string): boolean {
  return target.startsWith(IN_PROCESS_SCHEME);
}

/** The same limit the gRPC server and channel apply to one message (4 MiB, grpc-js's default). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** The retry policy of idempotent methods (the channel's service config says the same to grpc-js). */
export const RETRY_POLICY = { initialBackoffMs: 50, maxBackoffMs: 500, backoffMultiplier: 3, maxAttemptsCap: 5 } as const;

interface Method {
  readonly deserializeRequest: (b: Buffer) => unknown;
  readonly serializeResponse: (v: unknown) => Buffer;
  readonly handler: grpc.UntypedHandleCall;
}

/** Anything that registers services the way grpc.Server#addService does (grpc-health-check's HealthImplementation uses it). */
export interface ServiceRegistry {
  addService(definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void;
}

/** A server's services, registered under a name; `stop()` unregisters them (new calls: UNAVAILABLE). */
export interface InProcessServer extends ServiceRegistry {
  readonly target: string;
  stop(): void;
}

const servers = new Map<string, Map<string, Method>>();

/** The async context of a call arriving from the network: none of the caller's (taken when this module loads). */
const fresh = AsyncLocalStorage.snapshot();

/** Registers a server under `name` (unique in this process); its target is `in-process:<name>`. */
export function serveInProcess(name: string): InProcessServer {
  const target = `${IN_PROCESS_SCHEME}${name}`;
  if (servers.has(target)) throw new Error(`an in-process server named ${name} is already registered`);
  const methods = new Map<string, Method>();
  servers.set(target, methods);
  return {
    target,
    addService(definition, implementation) {
      for (const [key, def] of Object.entries(definition)) {
        // As grpc.Server#addService: by the method's key, else by its name in the proto (grpc-health-check's).
        const handler = implementation[key] ?? (def.originalName === undefined ? undefined : implementation[def.originalName]);
        // Unary methods only: the platform's clients make no streaming calls.
        if (!handler || def.requestStream || def.responseStream) continue;
        methods.set(def.path, { deserializeRequest: def.requestDeserialize, serializeResponse: def.responseSerialize as (v: unknown) => Buffer, handler });
      }
    },
    stop() {
      if (servers.get(target) === methods) servers.delete(target);
    },
  };
}

/** What the transports give createGrpcClient: one unary exchange, failing with a grpc.ServiceError. */
export interface UnaryTransport {
  unary(def: grpc.MethodDefinition<unknown, unknown>, request: unknown, metadata: grpc.Metadata, deadline: number): Promise<unknown>;
  close(): void;
}

function statusError(code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/** The in-process transport to `target`; `retried` lists the method paths retried on UNAVAILABLE (idempotent ones). */
export function inProcessTransport(target: string, retried: ReadonlySet<string>, maxAttempts: number): UnaryTransport {
  return {
    unary: async (def, request, metadata, deadline) => {
      const attempts = retried.has(def.path) ? maxAttempts : 1;
      for (let attempt = 1; ; attempt++) {
        try {
          return await exchange(target, def, request, metadata, deadline);
        } catch (err) {
          const e = err as grpc.ServiceError;
          if (attempt >= attempts || e.code !== grpc.status.UNAVAILABLE) throw err;
          const cap = Math.min(RETRY_POLICY.initialBackoffMs * RETRY_POLICY.backoffMultiplier ** (attempt - 1), RETRY_POLICY.maxBackoffMs);
          const pause = Math.random() * cap;
          if (Date.now() + pause >= deadline) throw err;
          await new Promise((r) => setTimeout(r, pause));
        }
      }
    },
    close: () => undefined,
  };
}

function exchange(target: string, def: grpc.MethodDefinition<unknown, unknown>, request: unknown, metadata: grpc.Metadata, deadline: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded before the call was sent'));
    const methods = servers.get(target);
    if (!methods) return reject(statusError(grpc.status.UNAVAILABLE, 'No connection established'));
    const method = methods.get(def.path);
    if (!method) return reject(statusError(grpc.status.UNIMPLEMENTED, `The server does not implement the method ${def.path}`));
    const bytes = def.requestSerialize(request);
    if (bytes.length > MAX_MESSAGE_BYTES) return reject(statusError(grpc.status.RESOURCE_EXHAUSTED, `Received message larger than max (${bytes.length} vs ${MAX_MESSAGE_BYTES})`));
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => settle(() => reject(statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'))), remaining);
    const callback = (err: grpc.ServiceError | Partial<grpc.StatusObject> | null, value?: unknown): void =>
      settle(() => {
        if (err) return reject(statusError(err.code ?? grpc.status.UNKNOWN, err.details ?? 'Unknown error', err.metadata?.clone()));
        try {
          const out = method.serializeResponse(value);
          if (out.length > MAX_MESSAGE_BYTES) return reject(statusError(grpc.status.RESOURCE_EXHAUSTED, `Received message larger than max (${out.length} vs ${MAX_MESSAGE_BYTES})`));
          resolve(def.responseDeserialize(out));
        } catch {
          reject(statusError(grpc.status.INTERNAL, 'Failed to serialize the response'));
        }
      });
    let call: unknown;
    try {
      call = {
        request: method.deserializeRequest(bytes),
        metadata: metadata.clone(),
        getDeadline: () => deadline,
        getPeer: () => target,
        getAuthContext: () => ({}),
        cancelled: false,
      };
    } catch {
      return settle(() => reject(statusError(grpc.status.INTERNAL, 'Failed to parse the request')));
    }
    fresh(() => {
      try {
        (method.handler as grpc.handleUnaryCall<unknown, unknown>)(call as grpc.ServerUnaryCall<unknown, unknown>, callback);
      } catch (err) {
        callback({ code: grpc.status.UNKNOWN, details: (err as Error).message });
      }
    });
  });
}

/** Method paths of `definition` whose key is listed (the idempotent ones). */
export function methodPaths(definition: ServiceDef, keys: readonly PropertyKey[]): Set<string> {
  return new Set(Object.entries(definition).filter(([k]) => keys.includes(k)).map(([, d]) => d.path));
}
