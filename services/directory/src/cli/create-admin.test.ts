/**
 * `--create-admin` against the real PostgreSQL: it creates the Administrator, brings an existing
 * account to the given password, and with `--if-missing` (the chart's Job on every upgrade) leaves
 * an existing account exactly as it is: no new hash, no event. ADMIN_PASSWORD may come from a file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type TestDatabase, createTestDatabase } from '@iam/platform/testing';
import { runCreateAdmin } from './create-admin';

describe('--create-admin (real PostgreSQL)', () => {
  let db: TestDatabase;
  let pg: Client;
  const email = 'root@example.com';
  const env = () => ({ DIRECTORY_DATABASE_URL: db.url, ARGON2_MEMORY_KIB: '8192', ARGON2_ITERATIONS: '1' });

  /** Runs the CLI; its exit code and what it printed. */
  async function run(argv: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; out: string }> {
    const out: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      return { code: await runCreateAdmin(['--create-admin', ...argv], { ...env(), ...extraEnv }), out: out.join('') };
    } finally {
      write.mockRestore();
    }
  }
  const account = async () =>
    (await pg.query<{ hash: string; first_name: string; events: number }>(
      `SELECT u.password_hash AS hash, u.first_name, (SELECT count(*)::int FROM outbox_events) AS events FROM users u WHERE u.email = $1`,
      [email],
    )).rows[0]!;

  beforeAll(async () => {
    db = await createTestDatabase('directory_create_admin');
  });
  afterAll(async () => {
    await pg?.end();
    await db?.drop();
  });

  it('creates the account; --if-missing then leaves it as it is; without it the password is set again', async () => {
    const created = await run(['--email', email, '--password', 'First-Passw0rd!x', '--first-name', 'Ada']);
    expect(created).toMatchObject({ code: 0, out: expect.stringMatching(/^created administrator root@example\.com/) });
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    const first = await account();
    expect(first.first_name).toBe('Ada');

    // Another password and name, --if-missing: nothing written, no event.
    const kept = await run(['--if-missing', '--email', email, '--password', 'Second-Passw0rd!y', '--first-name', 'Grace']);
    expect(kept).toMatchObject({ code: 0, out: expect.stringMatching(/^left unchanged \(--if-missing\): existing administrator root@example\.com/) });
    expect(await account()).toEqual(first);

    // Without the flag: the password is reset (the behaviour asked for with adminBootstrap.resetPassword).
    const updated = await run(['--email', email, '--password', 'Second-Passw0rd!y']);
    expect(updated).toMatchObject({ code: 0, out: expect.stringMatching(/^updated administrator/) });
    const after = await account();
    expect(after.hash).not.toBe(first.hash);
    expect(after.events).toBe(first.events + 1);
    // The same input again changes nothing (idempotent, as the spec says).
    expect((await run(['--email', email, '--password', 'Second-Passw0rd!y'])).code).toBe(0);
    expect(await account()).toEqual(after);
  }, 60_000);

  it('creates a missing account with --if-missing, the password read from ADMIN_PASSWORD_FILE', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-'));
    writeFileSync(join(dir, 'password'), 'From-A-File-Passw0rd!\n');
    const r = await run(['--if-missing'], { ADMIN_EMAIL: 'second@example.com', ADMIN_PASSWORD_FILE: join(dir, 'password') });
    expect(r).toMatchObject({ code: 0, out: expect.stringMatching(/^created administrator second@example\.com/) });
  }, 60_000);
});
