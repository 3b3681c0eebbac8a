import type { StreamSpec } from '@iam/contracts';

/**
 * Where a bus lives on a shared server: every subject and stream name carries the namespace's
 * prefix (none in production). Tests use it to get a private namespace.
 */
export class JetStreamNames {
  private readonly subjectPrefix: string;
  private readonly streamPrefix: string;

  constructor(readonly namespace: string) {
    this.subjectPrefix = namespace ? `${namespace}.` : '';
    this.streamPrefix = namespace ? `${namespace.replace(/[^A-Za-z0-9_-]/g, '_').toUpperCase()}_` : '';
  }

  /** The server's subject for one of ours. */
  subject(s: string): string {
    return this.subjectPrefix + s;
  }

  /** Ours for the server's subject. */
  unprefix(s: string): string {
    return this.subjectPrefix && s.startsWith(this.subjectPrefix) ? s.slice(this.subjectPrefix.length) : s;
  }

  stream(spec: StreamSpec): string {
    return this.streamPrefix + spec.name;
  }
}
