/** A TXT resolver whose records a test sets (domain verification without DNS). Not part of the service. */
import type { TxtResolver } from '../domain/organizations';

export class StubTxtResolver implements TxtResolver {
  readonly records = new Map<string, string[]>();
  /** Names whose lookup fails (a timeout, SERVFAIL). */
  readonly failing = new Set<string>();

  async txt(name: string): Promise<string[]> {
    if (this.failing.has(name)) throw Object.assign(new Error('queryTxt ETIMEOUT'), { code: 'ETIMEOUT' });
    return this.records.get(name) ?? [];
  }
}
