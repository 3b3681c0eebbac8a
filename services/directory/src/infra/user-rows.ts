/** A user row as the stores and the search read it, and the User it becomes. */
import type { User } from '../domain/model';

export interface UserRowSql {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  email_verified: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export const USER_COLUMNS = 'u.id, u.first_name, u.last_name, u.email, u.phone, u.email_verified, u.created_at, u.updated_at, u.deleted_at';

export function toUser(r: UserRowSql, roles: string[]): User {
  return {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone === null ? null : Number(r.phone),
    emailVerified: r.email_verified,
    roles,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}
