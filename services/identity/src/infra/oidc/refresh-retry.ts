/**
 * The provider's refresh retry window (issue #35, DESIGN §5): an OP refresh commits its rotation
 * before its answer leaves, so an answer lost on the way (identity killed, a client timeout, a
 * partition) used to make the client's retry a reuse that revoked the grant, and read in the
 * audit trail as token theft.
 *
 * Now a rotation keeps the answer it gave, sealed (AES-256-GCM under a key of identity's own, the
 * token's id as associated data), in the same statement that consumes the token
 * (token-writes.ts). When the same refresh token comes back within OIDC_REFRESH_RETRY_SECONDS and
 * the successor it was given is still unused, the adapter lets the library take the request as a
 * normal refresh (client authentication, DPoP proof, the account and its MFA policy are all
 * checked again), the request writes nothing, and its answer is replaced by the stored one: the
 * same refresh token, access token and ID token. So no second chain is forked and no token is
 * issued twice. After the window, or once the successor was used, it is a reuse as before: the
 * grant is revoked and `identity.refresh.reuse_detected` recorded. Housekeeping drops the stored
 * answers past the window.
 */
import type { SealingKeys } from '../../domain/sealing';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { DataSource } from 'typeorm';
import type { TokenRequestWrites } from './token-writes';

interface StoredAnswer {
  /** The token endpoint's JSON answer. */
  readonly body: Record<string, unknown>;
  /** The DPoP key the access token is bound to, if any: a retry must prove the same key. */
  readonly jkt: string | null;
}

const aad = (tokenId: string) => `oidc-refresh-answer:${tokenId}`;

/** The token endpoint's request as the provider's outer middleware sees it (the library sets `oidc`). */
type TokenRequest = { status: number; body: unknown; readonly oidc?: KoaContextWithOIDC['oidc'] };

function boundKey(oidc: KoaContextWithOIDC['oidc']): string | null {
  const at = oidc.entities.AccessToken;
  const jkt = at && 'jkt' in at ? at.jkt : undefined;
  return typeof jkt === 'string' ? jkt : null;
}

function isAnswer(body: unknown): body is Record<string, unknown> & { refresh_token: string } {
  return typeof body === 'object' && body !== null && 'refresh_token' in body && typeof body.refresh_token === 'string';
}

export class RefreshRetry {
  constructor(
    /** Keys sealing the stored answers (derived from the key-encryption key and its previous ones). */
    private readonly keys: SealingKeys,
    /** OIDC_REFRESH_RETRY_SECONDS; 0 keeps nothing (every reuse revokes). */
    readonly windowSeconds: number,
    private readonly writes: TokenRequestWrites,
  ) {}

  /**
   * After the library answered a refresh token request (inside its collected writes): a retry's
   * answer becomes the stored one; a successful rotation's answer is kept with its consume.
   */
  settle(ctx: TokenRequest): void {
    const { oidc } = ctx;
    const retry = this.writes.retry();
    if (!oidc) return;
    if (retry) {
      // Refused again (the client, the account or the proof no longer pass): that answer stands.
      if (ctx.status !== 200) return;
      const stored = JSON.parse(this.keys.open(retry.answer, aad(retry.tokenId)).toString('utf8')) as StoredAnswer;
      if (stored.jkt !== boundKey(oidc)) {
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'grant request is invalid' };
        return;
      }
      ctx.body = stored.body;
      return;
    }
    if (this.windowSeconds === 0 || ctx.status !== 200 || oidc.params?.grant_type !== 'refresh_token') return;
    const rotated = oidc.entities.RotatedRefreshToken;
    const body: unknown = ctx.body;
    if (!rotated || !isAnswer(body)) return;
    const answer: StoredAnswer = { body, jkt: boundKey(oidc) };
    this.writes.keepRotation('RefreshToken', rotated.jti, this.keys.seal(JSON.stringify(answer), aad(rotated.jti)), body.refresh_token);
  }

  /** Housekeeping: the answers of rotations older than the window (never read again). */
  async purge(ds: DataSource): Promise<void> {
    await ds.query(
      `UPDATE oidc_payloads SET retry_answer = NULL, successor_id = NULL
        WHERE retry_answer IS NOT NULL AND consumed_at < now() - make_interval(secs => $1::int)`,
      [this.windowSeconds],
    );
  }
}
