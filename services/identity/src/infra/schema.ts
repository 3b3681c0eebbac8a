import { CreateOutbox1763800000000, OutboxEventRow, OutboxHeaders1764200000200, OutboxLease1764900000000 } from '@iam/platform';
import {
  EmailActionRequestRow,
  EmailActionThrottleRow,
  EmailActionTokenRow,
  LoginFailureRow,
  OAuthClientRow,
  OidcPayloadRow,
  RefreshTokenRow,
  RevokedAccessTokenRow,
  RevokedSubjectRow,
  SealedSecretRow,
  SigningKeyRow,
} from './entities';
import { MfaChallengeRow, MfaRecoveryCodeRow, MfaTotpRow, PasskeyRow, SessionAccessTokenRow, SessionRow, WebauthnChallengeRow } from './factor-entities';
import { IdentitySchema1763800000200 } from './migrations/1763800000200-identity-schema';
import { EmailActions1763800000300 } from './migrations/1763800000300-email-actions';
import { RevokedSubjects1763900000400 } from './migrations/1763900000400-revoked-subjects';
import { EmailActionRequests1764100000500 } from './migrations/1764100000500-email-action-requests';
import { EmailActionRequestOrigin1764300000400 } from './migrations/1764300000400-email-action-request-origin';
import { RefreshSuperseded1764600000100 } from './migrations/1764600000100-refresh-superseded';
import { OAuthClients1764800000100 } from './migrations/1764800000100-oauth-clients';
import { SecondFactorsSessions1764800000300 } from './migrations/1764800000300-second-factors-sessions';
import { OidcPayloads1764800000500 } from './migrations/1764800000500-oidc-payloads';
import { Passkeys1765000000100 } from './migrations/1765000000100-passkeys';
import { OpSessions1765000000200 } from './migrations/1765000000200-op-sessions';
import { OidcPayloadLookups1765100000100 } from './migrations/1765100000100-oidc-payload-lookups';
import { SessionTokenClients1765200000100 } from './migrations/1765200000100-session-token-clients';
import { OidcRefreshRetry1765300000100 } from './migrations/1765300000100-oidc-refresh-retry';
import { ClientApiPermissions1765300000700 } from './migrations/1765300000700-client-api-permissions';
import { RecoveryCodeSchemes1765400000300 } from './migrations/1765400000300-recovery-code-schemes';
import { SealedSecrets1765400000500 } from './migrations/1765400000500-sealed-secrets';
import { WebauthnChallengeOwners1765400000750 } from './migrations/1765400000750-webauthn-challenge-owners';
import { ClientTokenAlgorithms1765400000800 } from './migrations/1765400000800-client-token-algorithms';
import { MfaChallengeFlow1765500000100 } from './migrations/1765500000100-mfa-challenge-flow';

export const entities = [
  SigningKeyRow,
  RefreshTokenRow,
  LoginFailureRow,
  RevokedAccessTokenRow,
  RevokedSubjectRow,
  EmailActionTokenRow,
  EmailActionThrottleRow,
  EmailActionRequestRow,
  OAuthClientRow,
  MfaTotpRow,
  MfaRecoveryCodeRow,
  MfaChallengeRow,
  SessionRow,
  SessionAccessTokenRow,
  OidcPayloadRow,
  PasskeyRow,
  WebauthnChallengeRow,
  SealedSecretRow,
  OutboxEventRow,
];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [
  CreateOutbox1763800000000,
  IdentitySchema1763800000200,
  EmailActions1763800000300,
  RevokedSubjects1763900000400,
  EmailActionRequests1764100000500,
  OutboxHeaders1764200000200,
  EmailActionRequestOrigin1764300000400,
  RefreshSuperseded1764600000100,
  OAuthClients1764800000100,
  SecondFactorsSessions1764800000300,
  OidcPayloads1764800000500,
  OutboxLease1764900000000,
  Passkeys1765000000100,
  OpSessions1765000000200,
  OidcPayloadLookups1765100000100,
  SessionTokenClients1765200000100,
  OidcRefreshRetry1765300000100,
  ClientApiPermissions1765300000700,
  RecoveryCodeSchemes1765400000300,
  SealedSecrets1765400000500,
  WebauthnChallengeOwners1765400000750,
  ClientTokenAlgorithms1765400000800,
  MfaChallengeFlow1765500000100,
];
