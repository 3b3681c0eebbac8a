/**
 * Counters of what matters to whoever watches sign-ins (issue #44): sign-in outcomes, lockouts,
 * second-factor checks, refresh-token reuse and token grants, for identity's ops port (never the
 * gateway's public /metrics). No label names a user, an email, an address or a client: only
 * bounded outcomes, factors and grant types, so the series say how many, never who.
 *
 * Sign-ins, lockouts, factors and reuse are counted from the events a transaction published, once
 * it committed (meteredUnitOfWork): the audit trail and the metrics count the same attempts, and
 * a rolled-back one counts in neither. Token grants are counted where tokens are handed out (the
 * provider's token endpoint, the REST sign-in and refresh).
 */
import { SUBJECTS } from '@iam/contracts';
import type { NewEvent } from '@iam/platform';
import { Counter, type Registry } from 'prom-client';
import type { UnitOfWork } from '../domain/ports';

export interface SecurityMetrics {
  /** identity.login.*: succeeded, failed (wrong credentials), refused_locked (not evaluated: the account is locked). */
  readonly signIns: Counter<'outcome'>;
  /** identity.account.locked: an account locked by its failures. */
  readonly lockouts: Counter;
  /** identity.mfa.verified / failed / recovery_code_used, by factor (totp, recovery_code, webauthn). */
  readonly secondFactors: Counter<'factor' | 'outcome'>;
  /** identity.refresh.reuse_detected, by where the token came from: rest (a family revoked) or provider (a grant revoked). */
  readonly refreshReuse: Counter<'source'>;
  /** Tokens handed out, by grant: the provider's grant types, rest_sign_in, rest_refresh. */
  readonly tokenGrants: Counter<'grant_type'>;
}

/** The counters on identity's registry (the ones already there when the service is built again on it). */
export function createSecurityMetrics(registry: Registry): SecurityMetrics {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter<L>({ name, help, labelNames, registers: [registry] });
  return {
    signIns: counter('identity_sign_ins_total', 'Sign-in attempts (REST login, the hosted sign-in, passkeys) by outcome: succeeded, failed, refused_locked. Never labelled by user or address.', ['outcome']),
    lockouts: counter('identity_account_lockouts_total', 'Accounts locked by their failed sign-in attempts.'),
    secondFactors: counter('identity_second_factor_checks_total', 'Second-factor checks by factor (totp, recovery_code, webauthn) and outcome (verified, failed).', ['factor', 'outcome']),
    refreshReuse: counter(
      'identity_refresh_token_reuse_total',
      'Rotated refresh tokens presented again (RFC 9700 reuse detection; the family or grant was revoked), by source: rest, provider.',
      ['source'],
    ),
    tokenGrants: counter(
      'identity_token_grants_total',
      "Tokens handed out, by grant: the OpenID provider's grant types (authorization_code, refresh_token, client_credentials, device code), rest_sign_in, rest_refresh.",
      ['grant_type'],
    ),
  };
}

/** The provider's grant types as label values (anything else, which the provider does not offer, is `other`). */
const PROVIDER_GRANTS = new Set(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:iam:grant-type:organization_token']);

/** A provider token endpoint answer's grant type as a bounded label value. */
export function grantLabel(grantType: string): string {
  return PROVIDER_GRANTS.has(grantType) ? grantType : 'other';
}

const FACTORS = new Set(['totp', 'recovery_code', 'webauthn']);

/** Counts the security events of one committed transaction. */
function count(m: SecurityMetrics, events: readonly NewEvent[]): void {
  for (const e of events) {
    const p = e.payload as { reason?: string; factor?: string; clientId?: string };
    switch (e.subject) {
      case SUBJECTS.loginSucceeded:
        m.signIns.inc({ outcome: 'succeeded' });
        break;
      case SUBJECTS.loginFailed:
        m.signIns.inc({ outcome: p.reason === 'locked' ? 'refused_locked' : 'failed' });
        break;
      case SUBJECTS.accountLocked:
        m.lockouts.inc();
        break;
      case SUBJECTS.mfaVerified:
      case SUBJECTS.mfaFailed:
        m.secondFactors.inc({ factor: FACTORS.has(p.factor ?? '') ? p.factor! : 'other', outcome: e.subject === SUBJECTS.mfaVerified ? 'verified' : 'failed' });
        break;
      case SUBJECTS.recoveryCodeUsed:
        m.secondFactors.inc({ factor: 'recovery_code', outcome: 'verified' });
        break;
      case SUBJECTS.refreshReuseDetected:
        m.refreshReuse.inc({ source: p.clientId ? 'provider' : 'rest' });
        break;
      default:
        break;
    }
  }
}

/**
 * The unit of work, counting the security events each transaction published once it committed
 * (an attempt that rolled back, or was retried after a deadlock, counts once or not at all).
 */
export function meteredUnitOfWork<S extends object>(uow: UnitOfWork<S>, metrics: SecurityMetrics): UnitOfWork<S> {
  return {
    run: async (fn) => {
      let published: NewEvent[] = [];
      const result = await uow.run((tx) => {
        published = [];
        return fn({
          ...tx,
          publish: async (events) => {
            await tx.publish(events);
            published.push(...events);
          },
        });
      });
      count(metrics, published);
      return result;
    },
  };
}
