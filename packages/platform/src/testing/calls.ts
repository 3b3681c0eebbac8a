/**
 * gRPC calls in tests as the platform's processes make them: signed with a call assertion
 * (grpc/assertion.ts) by a component (`gateway` for the services' public methods), acting for the
 * user of the request context, as the gateway does after verifying a token.
 */
import { randomBytes } from 'node:crypto';
import type { CallSigner } from '../grpc/assertion';
import { withRequestContext } from '../request-context';

/** The call-assertion key of a test process: give it to the services (ServiceRuntime.callKey) and the clients alike. */
export const TEST_CALL_KEY: Buffer = randomBytes(32);

/** A signer for calls from `from` (default `gateway`), with TEST_CALL_KEY. */
export function testSigner(from = 'gateway'): CallSigner {
  return { key: TEST_CALL_KEY, from };
}

/** Runs `fn` as a request of `actor` (undefined: a call that names nobody), as the gateway's auth hook does. */
export function actingAs<T>(actor: string | undefined, fn: () => Promise<T>): Promise<T> {
  return withRequestContext({ actor }, fn);
}
