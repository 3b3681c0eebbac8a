/**
 * The commerce refusals the edge tells apart. Until the platform's error model has codes of
 * their own, each is a CONFLICT whose first field error is `{field: 'reason', message: REASON}`
 * (documented in protos/commerce/v1/commerce.proto); the field errors after it name the inputs.
 */
import { AppError, type FieldError } from '@iam/platform';

export const REASON_FIELD = 'reason';

export const REASONS = {
  insufficientStock: 'INSUFFICIENT_STOCK',
  productUnavailable: 'PRODUCT_UNAVAILABLE',
  idempotencyConflict: 'IDEMPOTENCY_CONFLICT',
} as const;

export type Reason = (typeof REASONS)[keyof typeof REASONS];

function refusal(reason: Reason, detail: string, errors: readonly FieldError[]): AppError {
  return AppError.conflict(detail, [{ field: REASON_FIELD, message: reason }, ...errors]);
}

export function insufficientStock(detail: string, errors: readonly FieldError[] = []): AppError {
  return refusal(REASONS.insufficientStock, detail, errors);
}

export function productUnavailable(errors: readonly FieldError[]): AppError {
  return refusal(REASONS.productUnavailable, 'A product is unknown or no longer for sale.', errors);
}

export function idempotencyConflict(): AppError {
  return refusal(REASONS.idempotencyConflict, 'This idempotency key was used for another request.', [
    { field: 'idempotencyKey', message: 'was used for a different request' },
  ]);
}

/** The reason of a commerce refusal, or undefined. */
export function reasonOf(err: unknown): Reason | undefined {
  if (!(err instanceof AppError) || err.code !== 'CONFLICT') return undefined;
  const first = err.errors?.[0];
  return first?.field === REASON_FIELD ? (first.message as Reason) : undefined;
}
