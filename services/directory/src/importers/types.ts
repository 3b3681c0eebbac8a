/** A user in the bulk import's format (POST /api/v1/users/import, `--import`): one NDJSON line. */
export interface ImportUserJson {
  firstName: string;
  lastName: string;
  email: string;
  externalId?: string;
  emailVerified?: boolean;
  phone?: number;
  roles?: string[];
  passwordChangeRequired?: boolean;
  passwordHash?: string | { algorithm: string; hash: string; salt?: string; params?: Record<string, string | number> };
  /** A TOTP factor: the secret in base32, and the parameters (the import takes SHA1, 6, 30). */
  totp?: { secret: string; algorithm: string; digits: number; period: number };
}

/** What a converter gives: a user, or a warning about one record it could not carry whole. */
export type Converted = { user: ImportUserJson; warnings?: string[] } | { skip: string };

/** Names the import requires (non-empty): the given ones, else parts of a display name, else the email's local part. */
export function namesOf(first: unknown, last: unknown, display: unknown, email: string): { firstName: string; lastName: string } {
  const f = typeof first === 'string' ? first.trim() : '';
  const l = typeof last === 'string' ? last.trim() : '';
  if (f && l) return { firstName: f, lastName: l };
  const d = typeof display === 'string' ? display.trim().split(/\s+/).filter(Boolean) : [];
  const firstName = f || d[0] || email.split('@')[0] || 'User';
  const lastName = l || (d.length > 1 ? d.slice(1).join(' ') : '-');
  return { firstName, lastName };
}
