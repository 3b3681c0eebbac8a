/**
 * Who may manage an account's security (DESIGN §5; issue #34 item 2): its second factors,
 * passkeys, recovery codes, sessions, password and email. Only first-party tokens do: a REST
 * login's (no `client_id`) or one a first-party client holds (the console and the account page,
 * `iam-console`). A token an OAuth third-party client holds is refused (403,
 * identity.first_party_required): the user let that app act for them at the API, not take over
 * their sign-in. Adding or removing a factor and new recovery codes also need a sign-in within
 * five minutes (reauth.ts): a leaked token, or one past the window, cannot plant a factor.
 */
import { type AccessClaims, AppError } from '@iam/platform';
import type { ClientLookup } from '../domain/clients';
import { requireRecentSignIn } from './reauth';

export interface AccountAccess {
  /** FORBIDDEN (identity.first_party_required) for a token of a client that is not first party (a deleted or unknown one included). */
  firstParty(claims: AccessClaims): Promise<void>;
  /** firstParty, then a sign-in within REAUTH_SECONDS (FORBIDDEN identity.reauthentication_required). */
  factorChange(claims: AccessClaims): Promise<void>;
}

export const FIRST_PARTY_REQUIRED = 'identity.first_party_required';

export function createAccountAccess(deps: { clients: Pick<ClientLookup, 'find'> }): AccountAccess {
  async function firstParty(claims: AccessClaims): Promise<void> {
    if (claims.clientId === undefined) return;
    const client = await deps.clients.find(claims.clientId);
    if (client?.firstParty === true) return;
    throw new AppError('FORBIDDEN', "An app's token cannot change your account's security: use the account page.", { reason: FIRST_PARTY_REQUIRED });
  }
  return {
    firstParty,
    async factorChange(claims) {
      await firstParty(claims);
      requireRecentSignIn(claims);
    },
  };
}
