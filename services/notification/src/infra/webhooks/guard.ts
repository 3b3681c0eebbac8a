/**
 * The SSRF guard's two checks (domain/address-policy.ts has the rule): `checkUrl` when an endpoint
 * is registered or its URL changes, and `guardedLookup`, the DNS lookup undici's connector uses
 * for every new connection, so the address checked is the address connected to: a host that
 * resolved to a public address at registration and to a private one now (DNS rebinding) is
 * refused at connect time, and nothing can swap the address between the check and the connect.
 */
import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { isPlatformHost, type RefusalReason, refusedAddress } from '../../domain/address-policy';

/** Resolves a host name to its addresses (the system resolver by default; tests pass a stub). */
export type Resolver = (host: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (host) => dns.lookup(host, { all: true, verbatim: true });

export interface GuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE: private, loopback and link-local addresses allowed (development only). */
  readonly allowPrivate: boolean;
  /** Host names of the platform itself (never a webhook target). */
  readonly platformHosts: readonly string[];
  readonly resolve?: Resolver;
}

/** A refused address: what and why (`address` empty when no address was involved). */
export class AddressRefusedError extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly host: string,
    readonly address = '',
  ) {
    super(`webhook target ${host}${address && address !== host ? ` (${address})` : ''} refused: ${reason.replace('_', ' ')}`);
    this.name = 'AddressRefusedError';
  }
}

/** The host of a URL without IPv6 brackets, lower case. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** The addresses `host` may be reached at; AddressRefusedError when any of them (or the name) is refused. */
export async function allowedAddresses(host: string, g: GuardOptions): Promise<LookupAddress[]> {
  if (isPlatformHost(host, g.platformHosts)) throw new AddressRefusedError('platform_host', host);
  const literal = isIP(host);
  let addresses: LookupAddress[];
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = [...(await (g.resolve ?? systemResolver)(host))];
    } catch {
      throw new AddressRefusedError('unresolvable', host);
    }
    if (addresses.length === 0) throw new AddressRefusedError('unresolvable', host);
  }
  if (!g.allowPrivate) {
    // Every address must be public: a name that also resolves inward is refused whole.
    for (const a of addresses) {
      const reason = refusedAddress(a.address);
      if (reason) throw new AddressRefusedError(reason, host, a.address);
    }
  }
  return addresses;
}

/** The check at registration: scheme, credentials, the platform's hosts, and every address the host resolves to. */
export async function checkUrl(raw: string, g: GuardOptions): Promise<void> {
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && g.allowPrivate)) throw new AddressRefusedError('scheme', hostOf(url));
  await allowedAddresses(hostOf(url), g);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls connect (undici's `connect` option): the guard's addresses, filtered by
 * the family asked for; the refusal as the connect's error.
 */
export function guardedLookup(g: GuardOptions): (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    allowedAddresses(hostname.replace(/^\[|\]$/g, '').toLowerCase(), g).then(
      (all) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const fit = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
        if (fit.length === 0) {
          callback(Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }), '');
          return;
        }
        if (options.all) callback(null, fit);
        else callback(null, fit[0]!.address, fit[0]!.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, ''),
    );
  };
}

/** The AddressRefusedError somewhere in an error's cause chain. */
export function refusalIn(err: unknown): AddressRefusedError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AddressRefusedError) return e;
  }
  return undefined;
}
