/**
 * Bulk import of users (issue #39; `POST /api/v1/users/import`, users.manage, registered inside
 * `requiring('users.manage', ...)`): NDJSON (`application/x-ndjson`) or one JSON array
 * (`application/json`), up to IMPORT_MAX_BYTES. The body is spooled to a private temporary file as
 * it arrives (so a long import is not cut by the server's request timeout, and memory holds one
 * chunk), then read record by record in batches; the directory decides each line (created,
 * skipped, refused) and the DESIGN §3 role rules against the caller. The answer is NDJSON streamed
 * as batches finish: a line per input line, then a summary; one audit entry for the job.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import { AppError, type ImportFormat, inBatches, readImportRecords } from '@iam/platform/core';
import { problems } from '../schemas/common';
import { ImportAnswerLine } from '../schemas/user-import';
import type { Upstreams } from '../upstreams';

export const USER_IMPORT_PATH = '/api/v1/users/import';
/** Largest body accepted (413 beyond). */
export const IMPORT_MAX_BYTES = 512 * 1024 * 1024;
/** Lines per directory call, and the time one may take (a batch is a transaction of a few multi-row statements). */
const BATCH = 500;
const BATCH_DEADLINE_MS = 30_000;

const FORMATS: Record<string, ImportFormat> = {
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/json': 'json-array',
};

/** Copies the body to `file`, refusing (413) past the limit. */
async function spool(body: Readable, file: string): Promise<void> {
  let size = 0;
  const limit = new PassThrough({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > IMPORT_MAX_BYTES) done(new AppError('PAYLOAD_TOO_LARGE', `The import is larger than ${IMPORT_MAX_BYTES} bytes; split it.`));
      else done(null, chunk);
    },
  });
  await pipeline(body, limit, createWriteStream(file, { mode: 0o600 }));
}

export const userImportRoutes: FastifyPluginAsyncTypebox<{ upstreams: Upstreams }> = async (app, { upstreams }) => {
  // This context reads its bodies itself from the request stream (beyond the 64 KiB of the JSON
  // routes): the parsers accept the media types and leave the stream unread.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(Object.keys(FORMATS), (_req, _payload, done) => done(null));

  app.post(
    USER_IMPORT_PATH,
    {
      schema: {
        tags: ['users'],
        summary: 'Import users with their password hashes (NDJSON or a JSON array), streamed',
        description:
          'Each line (or array element) is a user: firstName, lastName, email, optional id, externalId, phone, emailVerified, roles, passwordChangeRequired, and passwordHash (a PHC or Modular Crypt string, or {algorithm, hash, salt, params}) or passwordMigration: "hook". ' +
          'The answer is NDJSON: a line per input line (created, skipped: the user exists by email or externalId, refused: with the reason), then {"summary": …}. A rerun of the same file creates nothing twice.',
        response: { 200: { description: 'NDJSON', content: { 'application/x-ndjson': { schema: ImportAnswerLine } } }, ...problems(400, 413, 415) },
      },
    },
    async (req, reply) => {
      const format = FORMATS[(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()];
      if (!format) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The import must be application/x-ndjson or application/json.');
      const dir = await mkdtemp(join(tmpdir(), 'iam-import-'));
      const file = join(dir, 'body');
      try {
        await spool(req.raw, file);
        const jobId = randomUUID();
        const out = new PassThrough();
        // The stream's lines are the 200 schema's (written below); Fastify sends a stream as it is.
        void reply.type('application/x-ndjson').send(out as unknown as Static<typeof ImportAnswerLine>);
        const write = async (value: unknown) => {
          // A client that went away ends the job (what it sent so far is written; a rerun is idempotent).
          if (out.destroyed) throw new AppError('UNAVAILABLE', 'The client went away.');
          if (!out.write(`${JSON.stringify(value)}\n`)) await Promise.race([once(out, 'drain'), once(out, 'close')]);
        };
        const counts = { created: 0, skipped: 0, refused: 0 };
        let error: string | undefined;
        try {
          for await (const batch of inBatches(readImportRecords(createReadStream(file), format), BATCH)) {
            const { results } = await upstreams.users.importUsers(
              { jobId, records: batch.map((r) => ('text' in r ? { line: r.line, text: r.text, error: '' } : { line: r.line, text: '', error: r.error })) },
              { deadlineMs: BATCH_DEADLINE_MS },
            );
            for (const r of results) {
              const status = r.status as 'created' | 'skipped' | 'refused';
              counts[status]++;
              await write({ line: r.line, status, ...(r.userId ? { id: r.userId } : {}), ...(r.reason ? { reason: r.reason } : {}), ...(r.hashFamily ? { hashFamily: r.hashFamily } : {}), ...(r.totp ? { totp: r.totp } : {}) });
            }
          }
        } catch (err) {
          // The answer has begun: the failure is its last line (nothing of the failed batch was written).
          error = err instanceof AppError ? err.message : 'The import stopped early; run it again (it is idempotent).';
          req.log.warn({ jobId, err }, 'user import stopped early');
        }
        // The job's one audit entry, also for a job that stopped early (its users are folded into it).
        await upstreams.users.finishUserImport({ jobId, ...counts, source: 'api' }).catch((err: unknown) => {
          error ??= 'The import was not recorded in the audit trail; run it again (it is idempotent).';
          req.log.error({ jobId, err }, 'user import not recorded');
        });
        if (!out.destroyed) {
          await write({ summary: { jobId, ...counts, complete: error === undefined, ...(error ? { error } : {}) } });
          out.end();
        }
        return reply;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
};
