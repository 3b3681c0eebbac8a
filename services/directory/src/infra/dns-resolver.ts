/** TXT lookups over the system's resolver (node:dns/promises), for domain verification. */
import { Resolver } from 'node:dns/promises';
import type { TxtResolver } from '../domain/organizations';

const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

export class NodeTxtResolver implements TxtResolver {
  private readonly resolver = new Resolver({ timeout: 5_000, tries: 2 });

  async txt(name: string): Promise<string[]> {
    try {
      return (await this.resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (err) {
      // The name or the record does not exist: an answer. Anything else (timeout, SERVFAIL) is a failed lookup.
      if (ABSENT.has((err as NodeJS.ErrnoException).code ?? '')) return [];
      throw err;
    }
  }
}
