import { CreateOutbox1763800000000, OutboxEventRow } from '@iam/platform';
import { EmailActionThrottleRow, EmailActionTokenRow, LoginFailureRow, RefreshTokenRow, RevokedAccessTokenRow, RevokedSubjectRow, SigningKeyRow } from './entities';
import { IdentitySchema1763800000200 } from './migrations/1763800000200-identity-schema';
import { EmailActions1763800000300 } from './migrations/1763800000300-email-actions';
import { RevokedSubjects1763900000400 } from './migrations/1763900000400-revoked-subjects';

export const entities = [SigningKeyRow, RefreshTokenRow, LoginFailureRow, RevokedAccessTokenRow, RevokedSubjectRow, EmailActionTokenRow, EmailActionThrottleRow, OutboxEventRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, IdentitySchema1763800000200, EmailActions1763800000300, RevokedSubjects1763900000400];
