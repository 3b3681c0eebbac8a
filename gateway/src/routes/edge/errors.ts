/**
 * Commerce errors, mapped in one place: for the REST routes (problem+json through the errors
 * plugin, field names in the route's spelling) and for GraphQL (`errors[].extensions.code`, the
 * codes of DESIGN §2 "Edge BFF"). A commerce refusal is a CONFLICT with a namespaced reason
 * (AppError.reason, `iam-error-reason` metadata; protos/commerce/v1/commerce.proto), mapped to
 * its public code by BY_REASON; a reason not listed there leaves as its code does.
 */
import { AppError, type FieldError } from '@iam/platform/core';

export const EDGE_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'INSUFFICIENT_STOCK',
  'PRODUCT_UNAVAILABLE',
  'IDEMPOTENCY_CONFLICT',
  'UPSTREAM_UNAVAILABLE',
] as const;
export type EdgeCode = (typeof EDGE_CODES)[number];

/** The domain refusals a storefront tells apart, by reason. */
const BY_REASON: Readonly<Partial<Record<string, EdgeCode>>> = {
  'commerce.insufficient_stock': 'INSUFFICIENT_STOCK',
  'commerce.product_unavailable': 'PRODUCT_UNAVAILABLE',
  'commerce.idempotency_conflict': 'IDEMPOTENCY_CONFLICT',
};

/** What a GraphQL client is told about an error; null for an unexpected one (logged, told nothing). */
export interface EdgeError {
  readonly code: EdgeCode;
  readonly message: string;
  /** The offending inputs, when the service named them. */
  readonly fields?: readonly FieldError[];
}

const BY_APP_CODE: Partial<Record<string, EdgeCode>> = {
  VALIDATION: 'BAD_USER_INPUT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  // A CONFLICT without a reason is a uniqueness conflict (a product's sku): the input is at fault.
  CONFLICT: 'BAD_USER_INPUT',
  UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  TIMEOUT: 'UPSTREAM_UNAVAILABLE',
  RATE_LIMITED: 'UPSTREAM_UNAVAILABLE',
};

/** The GraphQL view of an error, or null when it is not one the caller may see. */
export function edgeErrorOf(err: unknown): EdgeError | null {
  if (!(err instanceof AppError)) return null;
  const fields = err.errors ?? [];
  const refusal = err.reason === undefined ? undefined : BY_REASON[err.reason];
  if (refusal) return { code: refusal, message: err.detail ?? err.title, fields };
  const code = BY_APP_CODE[err.code];
  if (!code) return null;
  // Transport failures carry a generic detail (platform grpc client); say the same here.
  const message = code === 'UPSTREAM_UNAVAILABLE' ? 'The commerce service is unavailable; try again shortly.' : (err.detail ?? err.title);
  return { code, message, fields };
}

/**
 * A REST route's error: field errors named as the route spells its inputs (commerce says
 * `pageToken`, the route `page_token`), everything else as the errors plugin answers AppErrors.
 */
export function restErrorOf(err: unknown, fieldNames: Readonly<Record<string, string>>): Error {
  if (!(err instanceof AppError) || !err.errors) return err instanceof Error ? err : new Error(String(err));
  return err.withFieldErrors(err.errors.map((e) => ({ ...e, field: fieldNames[e.field] ?? e.field })));
}
