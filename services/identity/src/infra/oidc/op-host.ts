/**
 * Keeps the provider in step with the key ring: oidc-provider takes its signing keys when it is
 * made, so a new provider is made (same storage and cookie keys: sessions carry over) whenever
 * the ring's set of keys or the key that signs changes. Checked at most every few seconds; when
 * the ring cannot be read, the provider of the moment stays.
 */
import type { JWK } from 'jose';
import type { Logger } from '@iam/platform';
import type { Provider } from './provider';

const CHECK_MS = 5_000;

export class OpHost {
  private current: { version: string; provider: Provider } | undefined;
  private building: Promise<Provider> | undefined;
  private checkedAt = 0;

  constructor(
    private readonly keys: () => Promise<{ version: string; keys: JWK[] }>,
    private readonly build: (jwks: { keys: JWK[] }) => Promise<Provider>,
    private readonly logger: Logger,
  ) {}

  async provider(): Promise<Provider> {
    if (this.current && Date.now() - this.checkedAt < CHECK_MS) return this.current.provider;
    this.building ??= this.refresh().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  private async refresh(): Promise<Provider> {
    let ring;
    try {
      ring = await this.keys();
    } catch (err) {
      // The ring could not be read (its database down): the provider of the moment goes on with
      // the keys it has (discovery and the JWKS need no database), checked again later.
      if (!this.current) throw err;
      this.checkedAt = Date.now();
      this.logger.warn({ err: (err as Error).message }, 'OpenID provider keys could not be checked; the current ones stay');
      return this.current.provider;
    }
    this.checkedAt = Date.now();
    if (this.current?.version === ring.version) return this.current.provider;
    const provider = await this.build({ keys: ring.keys });
    if (this.current) this.logger.info({ keys: ring.version }, 'OpenID provider took the new signing keys');
    this.current = { version: ring.version, provider };
    return provider;
  }
}
