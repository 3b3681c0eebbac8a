/**
 * The relying party for each configured provider, made on demand: openid-client loaded once (it is
 * ESM only), a provider's discovery kept for DISCOVERY_TTL_MS per version of its settings (a change
 * through the API makes a new version, so it is discovered again at once).
 */
import type { Configuration } from 'openid-client';
import type { IdentityProviderRecord } from '../../domain/identity-providers';
import { githubConfiguration, githubUpstream } from './github';
import { type OpenIdClient, type PresetEndpoints, PUBLIC_PRESETS, type UpstreamClient, discoverOidc, oidcUpstream } from './upstream-client';

const DISCOVERY_TTL_MS = 10 * 60_000;

export interface Upstreams {
  /** The relying party of this provider; throws UpstreamRefusal('unavailable') when its discovery fails. */
  clientFor(provider: IdentityProviderRecord): Promise<UpstreamClient>;
}

export function createUpstreams(deps: {
  /** The provider's client secret, opened; null when it has none. */
  secretOf: (provider: IdentityProviderRecord) => Promise<string | null>;
  presets?: PresetEndpoints;
  now?: () => number;
}): Upstreams {
  const presets = deps.presets ?? PUBLIC_PRESETS;
  const now = deps.now ?? Date.now;
  let oc: Promise<OpenIdClient> | undefined;
  const configs = new Map<string, { config: Configuration; until: number }>();

  return {
    async clientFor(provider) {
      oc ??= import('openid-client');
      const lib = await oc;
      const key = `${provider.id}:${provider.version}`;
      let entry = configs.get(key);
      if (!entry || entry.until <= now()) {
        const secret = await deps.secretOf(provider);
        const config = provider.kind === 'github' ? githubConfiguration(lib, provider, secret, presets) : await discoverOidc(lib, provider, secret, presets);
        entry = { config, until: now() + DISCOVERY_TTL_MS };
        for (const k of configs.keys()) if (k.startsWith(`${provider.id}:`)) configs.delete(k);
        configs.set(key, entry);
      }
      return provider.kind === 'github' ? githubUpstream(lib, entry.config, provider, presets) : oidcUpstream(lib, entry.config, provider);
    },
  };
}
