/** A user row as the stores and the search read it, and the User it becomes. */
import type { User } from '../domain/model';
import { createdUs } from './paging';

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
  /** created_at in microseconds since the epoch (a list's keyset position, paging.ts). */
  created_us: string;
}

export const USER_COLUMNS = `u.id, u.first_name, u.last_name, u.email, u.phone, u.email_verified, u.created_at, u.updated_at, u.deleted_at, ${createdUs('u')}`;

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
