/** The bulk import's answer: NDJSON, one line per input line, then one summary line. */
import { Type } from '@sinclair/typebox';
import { Uuid } from './common';

export const ImportLine = Type.Object(
  {
    line: Type.Integer({ minimum: 1, description: 'The NDJSON line (or JSON array element), from 1' }),
    status: Type.Union([Type.Literal('created'), Type.Literal('skipped'), Type.Literal('refused')]),
    id: Type.Optional(Uuid),
    reason: Type.Optional(Type.String({ description: 'Why the line was skipped (the user exists) or refused' })),
    hashFamily: Type.Optional(Type.String({ description: 'The password-hash family read (bcrypt, pbkdf2-sha256, …)' })),
    totp: Type.Optional(Type.String({ description: 'The line\'s TOTP factor: "enrolled", "unchanged" (a rerun), or "not imported: " and why (a rerun retries it)' })),
  },
  { additionalProperties: false },
);

export const ImportSummary = Type.Object(
  {
    summary: Type.Object(
      {
        jobId: Uuid,
        created: Type.Integer({ minimum: 0 }),
        skipped: Type.Integer({ minimum: 0 }),
        refused: Type.Integer({ minimum: 0 }),
        complete: Type.Boolean({ description: 'false when the import stopped early (an upstream failure): run the same file again, it is idempotent' }),
        error: Type.Optional(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** One line of the answer, as the OpenAPI document shows it. */
export const ImportAnswerLine = Type.Union([ImportLine, ImportSummary], { description: 'Each line of the NDJSON answer: a result per input line, then the summary' });
