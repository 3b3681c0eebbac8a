/** The JSON forms of identity's answers that the second-factor and session routes share. */
import type { identityV1 } from '@iam/contracts';

export const passkeyJson = (p: identityV1.Passkey) => ({
  id: p.id,
  name: p.name,
  deviceType: p.deviceType,
  backedUp: p.backedUp,
  transports: p.transports,
  createdAt: (p.createdAt ?? new Date(0)).toISOString(),
  lastUsedAt: p.lastUsedAt ? p.lastUsedAt.toISOString() : null,
});

/** WebAuthn options from identity (JSON it made). */
export const optionsJson = (r: identityV1.WebauthnJson): Record<string, unknown> => JSON.parse(r.json) as Record<string, unknown>;

export const sessionJson = (s: identityV1.Session) => ({
  id: s.id,
  device: s.device,
  userAgent: s.userAgent,
  ip: s.ip,
  createdAt: (s.createdAt ?? new Date(0)).toISOString(),
  lastUsedAt: (s.lastUsedAt ?? new Date(0)).toISOString(),
  current: s.current,
  amr: s.amr,
});
