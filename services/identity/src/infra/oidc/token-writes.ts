/**
 * The token endpoint's writes, as one statement (issue #28, OP refresh grants/s).
 *
 * A refresh grant in oidc-provider consumes the presented token, saves its successor, saves the
 * access token (when opaque) and, through extraTokenClaims, records that token under its
 * session: four round trips, each its own commit. Inside a token request these writes are
 * collected instead, and written together before the answer leaves, by a middleware around the
 * provider's routes (provider.ts installs it): one statement, so all of them or none.
 *
 * A request answered with an error writes nothing it collected (`discard`, provider.ts): the
 * library consumes a refresh token before it resolves the resource, and a refusal there
 * (invalid_target) must not spend it.
 *
 * A consume guards the rest: when the token was consumed meanwhile (the same code or refresh
 * token presented twice at once), the statement writes nothing and the request is refused as an
 * invalid grant, where before both answers could carry tokens.
 *
 * Reads inside the request see the writes collected so far (they are written first); destroy and
 * revocation are never deferred.
 *
 * A refresh rotation's consume also keeps the answer it gave (sealed) and its successor's id, so
 * that a retry of the same token within the window is answered the same (refresh-retry.ts); a
 * request found to be such a retry writes nothing at all.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { queryNamed } from '@iam/platform';
import type { DataSource } from 'typeorm';

/**
 * One write, as a data-modifying CTE: `text` builds its SQL given its parameters' numbers
 * (`p(1)` is its first value's placeholder); it ANDs `guard` (the consumes succeeded) into its
 * condition, so nothing is written when a consume found its token consumed.
 */
export interface WritePart {
  /** Names the shape (statements are prepared per combination of shapes). */
  readonly shape: string;
  /** The row it writes, when one: a second write of that row in a request goes out after the first. */
  readonly row?: string;
  readonly values: readonly unknown[];
  readonly text: (p: (i: number) => string, guard: string) => string;
  /** A consume: the other writes of the statement wait on it. */
  readonly consume?: true;
}

/** The token presented was consumed by a concurrent request: nothing was written. */
export class ConsumedMeanwhile extends Error {
  constructor() {
    super('the grant was redeemed by another request meanwhile');
  }
}

/** Marks a code or refresh token consumed; the other writes depend on it. */
export function consumePart(kind: string, id: string): WritePart {
  return {
    shape: 'consume',
    consume: true,
    row: `${kind}:${id}`,
    values: [kind, id],
    text: (p) => `UPDATE oidc_payloads SET consumed_at = now() WHERE kind = ${p(1)} AND id = ${p(2)} AND consumed_at IS NULL RETURNING 1`,
  };
}

/** A refresh token's rotation: consumed, keeping the (sealed) answer it gave and the successor's id. */
function rotationPart(kind: string, id: string, answer: Buffer, successorId: string): WritePart {
  return {
    shape: 'consume-rotation',
    consume: true,
    row: `${kind}:${id}`,
    values: [kind, id, answer, successorId],
    text: (p) =>
      `UPDATE oidc_payloads SET consumed_at = now(), retry_answer = ${p(3)}, successor_id = ${p(4)} WHERE kind = ${p(1)} AND id = ${p(2)} AND consumed_at IS NULL RETURNING 1`,
  };
}

/** A refresh token presented again within the retry window, its successor unused: the answer it got (sealed). */
export interface RetryOf {
  readonly tokenId: string;
  readonly answer: Buffer;
}

interface Pending {
  readonly parts: WritePart[];
  /** Until the request's writes go out; a write started after that (work the request left running) goes alone. */
  open: boolean;
  /** The request is a retry of a rotation already made: it writes nothing. */
  retry?: RetryOf;
}

export class TokenRequestWrites {
  private readonly scope = new AsyncLocalStorage<Pending>();
  private readonly statements = new Map<string, { name: string; text: string }>();

  constructor(
    private readonly ds: DataSource,
    /** The fault suite's hook: a refresh rotation was committed (its answer not yet sent). */
    private readonly afterRotation?: () => void,
  ) {}

  /**
   * Runs a token request with its writes collected, then writes them (before the answer is sent);
   * throws ConsumedMeanwhile when its consume found the token consumed.
   */
  async collect(fn: () => Promise<void>): Promise<void> {
    const pending: Pending = { parts: [], open: true };
    try {
      await this.scope.run(pending, fn);
    } finally {
      pending.open = false;
    }
    await this.write(pending.parts.splice(0), true);
  }

  /** Writes: collected inside a token request, else written now (a consume of a consumed row is then a no-op). */
  async add(...parts: WritePart[]): Promise<void> {
    const pending = this.scope.getStore();
    if (!pending?.open) {
      await this.write(parts, false);
      return;
    }
    if (pending.retry) return;
    // One statement may not write a row twice: what is collected goes out first.
    if (parts.some((w) => w.row !== undefined && pending.parts.some((q) => q.row === w.row))) await this.write(pending.parts.splice(0), true);
    pending.parts.push(...parts);
  }

  /** This token request retries a rotation (the adapter found it so): from now on it writes nothing. */
  noteRetry(retry: RetryOf): void {
    const pending = this.scope.getStore();
    if (!pending?.open) return;
    pending.retry = retry;
    pending.parts.splice(0);
  }

  /** The rotation this token request retries, if it is a retry. */
  retry(): RetryOf | undefined {
    return this.scope.getStore()?.retry;
  }

  /** Nothing this token request collected is written (its answer is an error, or a stored one). */
  discard(): void {
    this.scope.getStore()?.parts.splice(0);
  }

  /**
   * Makes the collected consume of a refresh token its rotation: it keeps `answer` and the
   * successor's id. False when that consume is no longer pending (then no retry can be answered).
   */
  keepRotation(kind: string, id: string, answer: Buffer, successorId: string): boolean {
    const pending = this.scope.getStore();
    const i = pending?.open ? pending.parts.findIndex((w) => w.consume && w.row === `${kind}:${id}`) : -1;
    if (!pending || i < 0) return false;
    pending.parts[i] = rotationPart(kind, id, answer, successorId);
    return true;
  }

  /** Writes what this request collected so far (before a read or an immediate write). */
  async settle(): Promise<void> {
    const pending = this.scope.getStore();
    if (pending && pending.parts.length > 0) await this.write(pending.parts.splice(0), true);
  }

  /** The statement of a combination of shapes (built once; named by a digest, as PostgreSQL cuts names at 63 bytes). */
  private statementOf(ordered: readonly WritePart[]): { name: string; text: string } {
    const key = ordered.map((w) => w.shape).join('.');
    const known = this.statements.get(key);
    if (known) return known;
    const consumes = ordered.filter((w) => w.consume).length;
    const guard = consumes === 0 ? 'true' : `(SELECT count(*) FROM (${ordered.slice(0, consumes).map((_, i) => `SELECT 1 FROM w${i}`).join(' UNION ALL ')}) c) = ${consumes}`;
    let n = 0;
    const ctes = ordered.map((w, i) => {
      const base = n;
      n += w.values.length;
      return `w${i} AS (${w.text((k) => `$${base + k}`, guard)})`;
    });
    const statement = { name: `identity.oidc.writes.${createHash('sha256').update(key).digest('hex').slice(0, 24)}`, text: `WITH ${ctes.join(', ')} SELECT ${guard} AS ok` };
    if (this.statements.size < 100) this.statements.set(key, statement);
    return statement;
  }

  private async write(parts: WritePart[], strict: boolean): Promise<void> {
    if (parts.length === 0) return;
    // The consumes come first, and every other write waits on all of them having marked a row.
    const ordered = [...parts.filter((w) => w.consume), ...parts.filter((w) => !w.consume)];
    const statement = this.statementOf(ordered);
    const rows = await queryNamed<{ ok: boolean }>(this.ds.manager, statement.name, statement.text, ordered.flatMap((w) => w.values));
    if (strict && rows[0]?.ok !== true) throw new ConsumedMeanwhile();
    if (this.afterRotation && ordered.some((w) => w.shape === 'consume-rotation')) this.afterRotation();
  }
}
