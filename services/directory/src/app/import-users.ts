/**
 * Bulk import of users (issue #39), one batch of a job at a time: each line is created (the user,
 * its roles and `directory.user.created` carrying the job id, in the batch's one transaction),
 * skipped (a live user has its email or external id: a rerun changes nothing), or refused with
 * its reason. A job ends with one `directory.users.imported` holding its counts: the audit trail's
 * one entry for it. Password hashes are checked here (ImportedHashes), never at sign-in. A line's
 * TOTP factor is enrolled by identity (ImportTotp) once the batch has committed; its outcome is
 * the line's `totp` (a failure says why, and a rerun retries it: for a user the rerun skips, when
 * the caller is an Administrator or the operator's CLI, so nobody else can put a factor of theirs
 * on an existing account).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import { type Actor, type Rights, assertMayAssignRoles } from '../domain/authorization';
import type { ImportedHashes, ImportedTotp, ImportedUserRow, PrivilegedStores, TotpImporter, UnitOfWork } from '../domain/ports';
import { checkId } from '../domain/rules';
import { type ImportCandidate, parseImportLine } from './import-line';
import { rightsIn } from './users';

/** Lines per batch at most (one transaction, a few multi-row statements). */
export const IMPORT_BATCH_MAX = 1000;

/** One line as read from the file: its JSON text, or why it could not be read. */
export type ImportRecord = { readonly line: number; readonly text: string } | { readonly line: number; readonly error: string };

/** `totp`: what became of the line's TOTP factor ("enrolled", "unchanged", or "not imported: why"). */
export type ImportLineResult =
  | { line: number; status: 'created'; userId: string; hashFamily?: string; totp?: string }
  | { line: number; status: 'skipped'; userId?: string; reason: string; totp?: string }
  | { line: number; status: 'refused'; reason: string };

export interface ImportCounts {
  readonly created: number;
  readonly skipped: number;
  readonly refused: number;
}

export interface ImportUseCases {
  /**
   * One batch of job `jobId` (a UUID the caller chose); a result per record, in order. `actor`
   * null is the operator's `--import` CLI, which holds the database already: every role may be given.
   */
  importBatch(actor: Actor | null, jobId: string, records: readonly ImportRecord[]): Promise<ImportLineResult[]>;
  /** The job's one audit record (`directory.users.imported` with its counts). */
  finish(jobId: string, counts: ImportCounts, source: 'api' | 'cli'): Promise<void>;
}

export interface ImportDeps {
  readonly uow: UnitOfWork<Pick<PrivilegedStores, 'imports' | 'roles' | 'principals'>>;
  readonly hashes: ImportedHashes;
  /** Identity's ImportTotp; absent where this process cannot call identity (lines with a TOTP say so). */
  readonly totp?: TotpImporter;
}

/** ImportTotp calls at once per batch. */
const TOTP_CONCURRENCY = 8;
const NO_IDENTITY = 'not imported: this import cannot call identity (IDENTITY_GRPC_TARGET, INTERNAL_CALL_KEY)';
const NOT_YOURS = 'not imported: the user exists; only an Administrator or the operator\'s --import adds a factor to an existing user';

const OPERATOR: Rights = { administrator: true, permissions: new Set() };

type Ready = { line: number; user: ImportCandidate; stored: string; family?: string };

export function createImportUseCases(deps: ImportDeps): ImportUseCases {
  return {
    async importBatch(actor, rawJobId, records) {
      const jobId = checkId(rawJobId, 'jobId');
      if (records.length > IMPORT_BATCH_MAX) throw AppError.validation('Too many lines in one batch.', [{ field: 'records', message: `at most ${IMPORT_BATCH_MAX}` }]);
      const results = new Map<number, ImportLineResult>();
      const refuse = (line: number, reason: string) => results.set(line, { line, status: 'refused', reason });
      const ready: Ready[] = [];
      /** Lines whose TOTP factor goes to identity once the batch has committed. */
      const totps = new Map<number, { userId: string; totp: ImportedTotp }>();
      for (const r of records) {
        if ('error' in r) {
          refuse(r.line, r.error);
          continue;
        }
        const parsed = parseImportLine(r.text);
        if (!parsed.ok) {
          refuse(r.line, parsed.reason);
          continue;
        }
        const { password } = parsed.user;
        if (password.kind !== 'hash') {
          ready.push({ line: r.line, user: parsed.user, stored: '' });
          continue;
        }
        const hash = deps.hashes.accept(password.input);
        if (!hash.ok) refuse(r.line, `passwordHash: ${hash.reason}`);
        else ready.push({ line: r.line, user: parsed.user, stored: hash.stored, family: hash.family });
      }

      await deps.uow.run(async (tx) => {
        const rights = actor === null ? OPERATOR : await rightsIn(tx, actor);
        /** A rerun retries a skipped user's factor only for these callers. */
        const skipped = (line: number, reason: string, userId: string | undefined, totp: ImportedTotp | null) => {
          results.set(line, { line, status: 'skipped', reason, ...(totp && !rights.administrator ? { totp: NOT_YOURS } : {}) });
          if (totp && userId && rights.administrator) totps.set(line, { userId, totp });
        };
        const names = [...new Set(ready.flatMap((r) => r.user.roles.map((n) => n.trim())))];
        const roles = new Map((names.length > 0 ? await tx.roles.findLiveByNames(names) : []).map((role) => [role.name.toLowerCase(), role]));
        const existing = await tx.imports.existing({
          emails: ready.map((r) => r.user.email),
          externalIds: ready.flatMap((r) => (r.user.externalId === null ? [] : [r.user.externalId])),
          ids: ready.flatMap((r) => (r.user.id === undefined ? [] : [r.user.id])),
        });
        const firstLine = new Map<string, number>();
        const rows: Array<ImportedUserRow & { line: number; family?: string; totp: ImportedTotp | null; roleNames: string[] }> = [];
        for (const r of ready) {
          const u = r.user;
          const wanted = [...new Set(u.roles.map((n) => n.trim().toLowerCase()))];
          const unknown = wanted.filter((n) => !roles.has(n));
          if (unknown.length > 0) {
            refuse(r.line, `roles: unknown role(s) ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
            continue;
          }
          const given = wanted.map((n) => roles.get(n)!);
          try {
            assertMayAssignRoles(rights, given, []);
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            refuse(r.line, `roles: ${err.message}`);
            continue;
          }
          if (existing.emails.has(u.email)) {
            skipped(r.line, 'a user with this email exists', existing.emails.get(u.email), u.totp);
            continue;
          }
          if (u.externalId !== null && existing.externalIds.has(u.externalId)) {
            skipped(r.line, 'a user with this externalId exists', existing.externalIds.get(u.externalId), u.totp);
            continue;
          }
          if (u.id !== undefined && existing.ids.has(u.id)) {
            refuse(r.line, 'id: another user (or a deleted one) has this id');
            continue;
          }
          const keys = [`email:${u.email}`, ...(u.externalId === null ? [] : [`external:${u.externalId}`]), ...(u.id === undefined ? [] : [`id:${u.id}`])];
          const earlier = keys.map((k) => firstLine.get(k)).find((l) => l !== undefined);
          if (earlier !== undefined) {
            results.set(r.line, { line: r.line, status: 'skipped', reason: `duplicate of line ${earlier}` });
            continue;
          }
          for (const k of keys) firstLine.set(k, r.line);
          rows.push({
            line: r.line,
            family: r.family,
            totp: u.totp,
            roleNames: given.map((g) => g.name).sort(),
            id: u.id ?? randomUUID(),
            firstName: u.firstName,
            lastName: u.lastName,
            email: u.email,
            phone: u.phone,
            passwordHash: r.stored,
            emailVerified: u.emailVerified,
            externalId: u.externalId,
            passwordMigration: u.password.kind === 'hook' ? 'hook' : null,
            passwordChangeRequired: u.passwordChangeRequired,
            roleIds: given.map((g) => g.id),
          });
        }
        const inserted = await tx.imports.insertMany(rows);
        const events = [];
        for (const row of rows) {
          if (!inserted.has(row.id)) {
            // Taken by another writer between the read and the insert.
            results.set(row.line, { line: row.line, status: 'skipped', reason: 'a user with this email, externalId or id exists' });
            continue;
          }
          results.set(row.line, { line: row.line, status: 'created', userId: row.id, ...(row.family ? { hashFamily: row.family } : {}) });
          if (row.totp) totps.set(row.line, { userId: row.id, totp: row.totp });
          events.push(
            event(SUBJECTS.userCreated, {
              userId: row.id,
              email: row.email,
              firstName: row.firstName,
              lastName: row.lastName,
              roles: row.roleNames,
              changedFields: [],
              phone: row.phone ?? undefined,
              emailVerified: row.emailVerified,
              before: undefined,
              importJobId: jobId,
            }),
          );
        }
        if (events.length > 0) await tx.publish(events);
      });
      // After the commit (identity refuses a factor for a user it cannot find), a few at a time.
      const pending = [...totps];
      const enrol = async () => {
        for (let next = pending.shift(); next; next = pending.shift()) {
          const [line, { userId, totp }] = next;
          const r = results.get(line);
          if (!r || r.status === 'refused') continue;
          r.totp = deps.totp ? await deps.totp.importTotp(userId, totp).catch((err: unknown) => `not imported: ${err instanceof AppError ? err.message : 'identity did not answer; run the import again'}`) : NO_IDENTITY;
        }
      };
      await Promise.all(Array.from({ length: TOTP_CONCURRENCY }, enrol));
      return records.map((r) => results.get(r.line) ?? { line: r.line, status: 'refused', reason: 'not read' });
    },

    async finish(rawJobId, counts, source) {
      const jobId = checkId(rawJobId, 'jobId');
      await deps.uow.run((tx) => tx.publish([event(SUBJECTS.usersImported, { jobId, created: counts.created, skipped: counts.skipped, refused: counts.refused, source })]));
    },
  };
}
