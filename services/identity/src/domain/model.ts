import type { AccessClaims } from '@iam/platform';

export type { AccessClaims };

/** Who a user is at token issuance (from the directory). */
export interface Principal {
  readonly userId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly roles: readonly string[];
  readonly permissions: readonly string[];
  readonly emailVerified: boolean;
}

export interface TokenPair {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly tokenType: 'Bearer';
  readonly expiresIn: number;
  readonly refreshExpiresIn: number;
}

export interface RefreshRecord {
  readonly id: string;
  readonly familyId: string;
  readonly userId: string;
  readonly expiresAt: Date;
  readonly rotatedAt: Date | null;
  readonly revokedAt: Date | null;
  /**
   * Whether presenting it again may rotate a live token: it is live itself, or it was rotated
   * within the grace period and its successor (or the end of a chain of successors superseded by
   * such retries) is live, so it is a client retrying a refresh whose answer it lost.
   */
  readonly retryable: boolean;
}

export interface PublicJwk {
  readonly kid: string;
  readonly kty: string;
  readonly alg: string;
  readonly use: 'sig';
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly n?: string;
  readonly e?: string;
}
