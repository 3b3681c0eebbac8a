/** The reauthentication window (DESIGN §5): adding or removing a factor, and new recovery codes, need a recent sign-in. */
import { type AccessClaims, AppError } from '@iam/platform';

/** Adding or removing a factor, or making new recovery codes, needs a sign-in this recent. */
export const REAUTH_SECONDS = 300;

/** FORBIDDEN with reason identity.reauthentication_required unless `auth_time` is within REAUTH_SECONDS. */
export function requireRecentSignIn(claims: Pick<AccessClaims, 'authTime'>, nowMs = Date.now()): void {
  if (claims.authTime === undefined || nowMs / 1000 - claims.authTime > REAUTH_SECONDS) {
    throw new AppError('FORBIDDEN', 'This needs a sign-in within the last 5 minutes: sign in again and retry.', { reason: 'identity.reauthentication_required' });
  }
}
