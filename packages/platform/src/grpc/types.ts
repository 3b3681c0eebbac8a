import type * as grpc from '@grpc/grpc-js';

/* eslint-disable @typescript-eslint/no-explicit-any -- generated service definitions are heterogeneous */
/** A ts-proto `outputServices=grpc-js` service definition: method name → method definition. */
export type ServiceDef = Record<string, grpc.MethodDefinition<any, any>>;
/* eslint-enable @typescript-eslint/no-explicit-any */

export type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer Req } ? Req : never;
export type ResponseOf<M> = M extends { responseDeserialize: (b: Buffer) => infer Res } ? Res : never;

/** Splits `/directory.v1.UserService/CreateUser` into its service and method names. */
export function splitPath(path: string): { service: string; method: string } {
  const [, service = '', method = ''] = /^\/([^/]+)\/([^/]+)$/.exec(path) ?? [];
  return { service, method };
}

/** Metadata keys that carry an AppError across gRPC: its code, its reason (a domain refusal's, e.g. `commerce.insufficient_stock`), field errors, Retry-After. */
export const ERROR_CODE_KEY = 'iam-error-code';
export const ERROR_REASON_KEY = 'iam-error-reason';
export const FIELD_ERRORS_KEY = 'iam-field-errors-bin';
export const RETRY_AFTER_KEY = 'iam-retry-after';
