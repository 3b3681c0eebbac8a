/** PostgreSQL errors as TypeORM or pg raise them: their SQLSTATE and constraint. */

/** PostgreSQL error code of a unique violation, for mapping to 409. */
export const UNIQUE_VIOLATION = '23505';

export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

export function pgConstraint(err: unknown): string | undefined {
  const e = err as { constraint?: string; driverError?: { constraint?: string } };
  return e?.driverError?.constraint ?? e?.constraint;
}
