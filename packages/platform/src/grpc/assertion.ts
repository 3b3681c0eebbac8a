/**
 * Call assertions: how a gRPC caller proves who it is (issue #22). Every call between the
 * platform's processes carries, in metadata, a short-lived token signed with the key they share
 * (INTERNAL_CALL_KEY, HMAC-SHA-256): which component calls (`iss`), which service it calls
 * (`aud`), and, when the call acts for a user, that user (`sub`, from the verified access token
 * of the request being served). A server verifies it before any handler runs and takes the actor
 * from it alone, so a pod that can reach a gRPC port but does not hold the key cannot act as
 * anyone, whatever metadata it sends (a NetworkPolicy is no longer the only guard). With mutual
 * TLS on (grpcTls), the channel is authenticated as well.
 *
 * An assertion lives CALL_ASSERTION_LIFETIME_S seconds (a call's deadline is shorter) and is
 * bound to its audience; it names no request, so within its minute a captured one could be
 * replayed to the same service by whoever can read the mesh's traffic: the mTLS option closes
 * that. The key is never logged; a refusal says only that the caller is not authenticated.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';

/** Metadata key of the assertion. */
export const CALL_ASSERTION_KEY = 'iam-call-assertion';
/** How long an assertion is accepted after it was made (s). */
export const CALL_ASSERTION_LIFETIME_S = 60;
/** Clock difference tolerated between two processes (s). */
const SKEW_S = 30;

/** What a verified assertion says. */
export interface CallAssertion {
  /** The calling component: `gateway`, `identity`, `commerce`, ... */
  readonly from: string;
  /** The user the call acts for, when it acts for one. */
  readonly actor?: string;
}

/** What a process signs its calls with: the shared key and its own component name. */
export interface CallSigner {
  readonly key: Buffer;
  readonly from: string;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'iam-call+jwt' })).toString('base64url');
const ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const ACTOR_RE = /^[A-Za-z0-9._:@-]{1,200}$/;

function mac(key: Buffer, input: string): Buffer {
  return createHmac('sha256', key).update(input).digest();
}

/** A fresh assertion of `from` calling `to`, for `actor` when given. */
export function signCallAssertion(key: Buffer, claims: { from: string; to: string; actor?: string }, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const payload = { iss: claims.from, aud: claims.to, ...(claims.actor ? { sub: claims.actor } : {}), iat, exp: iat + CALL_ASSERTION_LIFETIME_S, jti: randomBytes(9).toString('base64url') };
  const input = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${mac(key, input).toString('base64url')}`;
}

const refused = (): AppError => AppError.unauthenticated('The caller is not authenticated.');

/**
 * The assertion's content when it is one of ours, for service `to`, and current; UNAUTHENTICATED
 * otherwise (the same answer whatever is wrong with it).
 */
export function verifyCallAssertion(key: Buffer, token: string | undefined, to: string, nowMs = Date.now()): CallAssertion {
  if (typeof token !== 'string' || token.length > 2_048) throw refused();
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== HEADER) throw refused();
  const expected = mac(key, `${parts[0]}.${parts[1]}`);
  const given = Buffer.from(parts[2]!, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  let claims: { iss?: unknown; aud?: unknown; sub?: unknown; iat?: unknown; exp?: unknown };
  try {
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    throw refused();
  }
  const now = Math.floor(nowMs / 1000);
  const { iss, aud, sub, iat, exp } = claims;
  if (typeof iss !== 'string' || !ID_RE.test(iss) || aud !== to) throw refused();
  if (typeof iat !== 'number' || typeof exp !== 'number' || !Number.isInteger(iat) || !Number.isInteger(exp)) throw refused();
  if (exp - iat > CALL_ASSERTION_LIFETIME_S || iat > now + SKEW_S || exp < now - SKEW_S) throw refused();
  if (sub !== undefined && (typeof sub !== 'string' || !ACTOR_RE.test(sub))) throw refused();
  return { from: iss, ...(typeof sub === 'string' ? { actor: sub } : {}) };
}
