import { CreateOutbox1763800000000, OutboxEventRow } from '@iam/platform';
import { LoginFailureRow, RefreshTokenRow, RevokedAccessTokenRow, SigningKeyRow } from './entities';
import { IdentitySchema1763800000200 } from './migrations/1763800000200-identity-schema';

export const entities = [SigningKeyRow, RefreshTokenRow, LoginFailureRow, RevokedAccessTokenRow, OutboxEventRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, IdentitySchema1763800000200];
