/**
 * Identity's own series on its registry: the age of the signing key in use, one series per
 * algorithm of the ring (RS256 for ID tokens, JWT_ALG for access tokens, ...), so an alert can tell
 * a rotation that stopped happening (JWT_KEY_ROTATION_HOURS passed and the same key still signs)
 * from one that works (the age drops to 0 at each rotation).
 */
import type { JwtAlg, Metrics } from '@iam/platform';
import { Gauge } from 'prom-client';

export const SIGNING_KEY_AGE = 'jwt_signing_key_age_seconds';

/** Read at each scrape; no series for an algorithm while no key of it can sign (identity is then not ready either). */
export function registerSigningKeyAge(m: Metrics, keys: { signingKeyAges(): Array<{ alg: JwtAlg; seconds: number }> }): void {
  m.registry.removeSingleMetric(SIGNING_KEY_AGE);
  new Gauge({
    name: SIGNING_KEY_AGE,
    help: 'Seconds since the signing key in use started to sign (back to 0 at each rotation, every JWT_KEY_ROTATION_HOURS).',
    labelNames: ['alg'],
    registers: [m.registry],
    collect() {
      this.reset();
      for (const age of keys.signingKeyAges()) this.set({ alg: age.alg }, age.seconds);
    },
  });
}
