/**
 * The commerce refusals the edge tells apart: each is a CONFLICT (409, ALREADY_EXISTS) with a
 * namespaced reason (AppError.reason, carried in gRPC metadata; protos/commerce/v1/commerce.proto),
 * one factory per refusal; its field errors name the offending inputs. A CONFLICT without a
 * reason is a uniqueness conflict (a product's sku).
 */
import { AppError, type FieldError } from '@iam/platform';

export const REASONS = {
  insufficientStock: 'commerce.insufficient_stock',
  productUnavailable: 'commerce.product_unavailable',
  idempotencyConflict: 'commerce.idempotency_conflict',
} as const;

export type Reason = (typeof REASONS)[keyof typeof REASONS];

function refusal(reason: Reason, detail: string, errors: readonly FieldError[]): AppError {
  return new AppError('CONFLICT', detail, { reason, errors });
}

/** A line (or a stock adjustment) asks for more than is available. */
export function insufficientStock(detail: string, errors: readonly FieldError[] = []): AppError {
  return refusal(REASONS.insufficientStock, detail, errors);
}

/** A line names an unknown or archived product. */
export function productUnavailable(errors: readonly FieldError[]): AppError {
  return refusal(REASONS.productUnavailable, 'A product is unknown or no longer for sale.', errors);
}

/** The idempotency key was used before with another request. */
export function idempotencyConflict(): AppError {
  return refusal(REASONS.idempotencyConflict, 'This idempotency key was used for another request.', [
    { field: 'idempotencyKey', message: 'was used for a different request' },
  ]);
}

/** The reason of a commerce refusal, or undefined. */
export function reasonOf(err: unknown): Reason | undefined {
  if (!(err instanceof AppError) || err.code !== 'CONFLICT') return undefined;
  return Object.values(REASONS).find((r) => r === err.reason);
}
