/**
 * `--import FILE` against the real PostgreSQL (an empty database: it migrates first): NDJSON and
 * JSON array files, the same answer lines as the API, a rerun that creates nothing, exit code 3
 * when lines were refused, 2 for bad usage; one users.imported in the outbox per run.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type TestDatabase, createTestDatabase } from '@iam/platform/testing';
import { runImport } from './import-users';

describe('--import (real PostgreSQL)', () => {
  let db: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'directory-import-'));
  const env = () => ({ DIRECTORY_DATABASE_URL: db.url, ARGON2_MEMORY_KIB: '8192', ARGON2_ITERATIONS: '1' });
  const run = async (argv: string[]) => {
    const lines: string[] = [];
    const code = await runImport(argv, env(), (l) => lines.push(l));
    return { code, lines: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  };

  beforeAll(async () => {
    db = await createTestDatabase('directory_cli_import');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('imports an NDJSON file, then again with nothing new; refused lines give exit code 3', async () => {
    const file = join(dir, 'users.ndjson');
    writeFileSync(
      file,
      [
        JSON.stringify({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', passwordHash: '$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6', roles: ['Administrator'] }),
        JSON.stringify({ firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com', passwordMigration: 'hook' }),
        '',
      ].join('\n'),
    );
    const first = await run(['--import', file]);
    expect(first).toEqual({
      code: 0,
      lines: [
        { line: 1, status: 'created', id: expect.any(String), hashFamily: 'bcrypt' },
        { line: 2, status: 'created', id: expect.any(String) },
        { summary: { jobId: expect.any(String), created: 2, skipped: 0, refused: 0, complete: true } },
      ],
    });
    const again = await run(['--import', file]);
    expect(again.code).toBe(0);
    expect(again.lines.at(-1)).toEqual({ summary: expect.objectContaining({ created: 0, skipped: 2 }) });

    const arrayFile = join(dir, 'users.json');
    writeFileSync(arrayFile, JSON.stringify([{ firstName: 'Bad', lastName: 'Hash', email: 'bad@example.com', passwordHash: '$2a$31$xx' }]));
    const refused = await run(['--import', arrayFile]);
    expect(refused.code).toBe(3);
    expect(refused.lines[0]).toEqual({ line: 1, status: 'refused', reason: 'passwordHash: malformed or truncated bcrypt hash' });

    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events WHERE subject = 'directory.users.imported'`);
      expect(rows[0]!.n).toBe(3);
    } finally {
      await pg.end();
    }
  });

  it('exit code 2 for bad usage', async () => {
    expect((await run(['--import'])).code).toBe(2);
    expect((await run(['--import', 'x.csv', '--format', 'csv'])).code).toBe(2);
  });
});
