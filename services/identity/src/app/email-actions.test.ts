/**
 * Accepted email-action requests against the real PostgreSQL: recorded before the answer, the
 * same work for an unknown address, turned into exactly one token and event each — also by a new
 * process after a crash, by competing replicas, and after the directory was unreachable.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { AppError, sha256 } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger, testMetrics } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { entities, migrations } from '../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../infra/stores';
import { createEmailActionUseCases } from './email-actions';

describe('email-action requests (recorded before the 202, processed from the table)', () => {
  let db: MigratedDatabase;
  let ds: DataSource;
  const logger = testLogger();
  const sealKey = randomBytes(32);
  const accounts = new Map<string, Principal>();
  let directoryDown = false;
  /** A refusal the directory gives for every try (an address it cannot read, a bug). */
  let directoryRefuses: Error | undefined;
  let lookups = 0;
  const metrics = testMetrics();

  const directory: Directory = {
    verifyCredentials: () => Promise.reject(new Error('not used')),
    principal: async (userId) => [...accounts.values()].find((a) => a.userId === userId) ?? null,
    findAccount: async (email) => {
      lookups++;
      if (directoryDown) throw AppError.unavailable('directory unreachable');
      if (directoryRefuses) throw directoryRefuses;
      return accounts.get(email.trim().toLowerCase()) ?? null;
    },
    resetPassword: async () => {
      throw AppError.unavailable('directory unreachable');
    },
    markEmailVerified: () => Promise.reject(new Error('not used')),
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };

  /** A fresh instance: what a restarted process would build. */
  const useCases = (perEmailLimit = 100) =>
    createEmailActionUseCases({
      settings: { sealKey, tokenLifetimeSeconds: 3_600, perEmailLimit, perEmailWindowSeconds: 3_600, resetRemovesFactorsHours: 24 },
      uow: pgUnitOfWork(ds),
      stores: pgIdentityStores(ds.manager),
      directory,
      logger,
      endSessionsIn: async () => 0,
      metrics,
    });

  const account = (): Principal => {
    const email = `req-${randomUUID()}@example.com`;
    const p = { userId: randomUUID(), firstName: 'Ada', lastName: 'L', email, roles: [], permissions: [], emailVerified: false };
    accounts.set(email, p);
    return p;
  };
  const count = async (sql: string, params: unknown[] = []) => Number((await ds.query<Array<{ n: string }>>(sql, params))[0]!.n);
  const resetEvents = () => count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.passwordResetRequested]);
  const drain = async (uc: ReturnType<typeof useCases>) => {
    while ((await uc.processRequests(50)) > 0);
  };

  beforeAll(async () => {
    db = await migratedTestDatabase('identity', { entities, migrations });
    ds = db.ds;
  });

  afterAll(async () => {
    await db?.close();
  });

  beforeEach(async () => {
    await ds.query('DELETE FROM email_action_requests');
    await ds.query('DELETE FROM outbox_events');
    directoryDown = false;
    directoryRefuses = undefined;
  });

  it('a request is a row (address sealed, nothing asked of the directory) before it resolves, for known and unknown addresses alike', async () => {
    const known = account();
    const uc = useCases();
    lookups = 0;
    await uc.requestPasswordReset(known.email);
    await uc.requestPasswordReset(`nobody-${randomUUID()}@example.com`);
    expect(lookups).toBe(0);
    const rows = await ds.query<Array<{ sealed_email: Buffer; email_hash: Buffer }>>('SELECT sealed_email, email_hash FROM email_action_requests ORDER BY created_at');
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.sealed_email.length)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(rows[0]!.sealed_email.toString('latin1')).not.toContain(known.email);
    expect(await resetEvents()).toBe(0);
  });

  it('"crash" after the 202: a new instance turns each accepted request into exactly one token and event; unknown addresses into none', async () => {
    const known = Array.from({ length: 5 }, account);
    const before = useCases();
    for (const a of known) await before.requestPasswordReset(a.email);
    await before.requestPasswordReset(`nobody-${randomUUID()}@example.com`);
    // The process that accepted them is gone; another one starts.
    const after = useCases();
    await drain(after);
    await drain(after);
    expect(await count('SELECT count(*) AS n FROM email_action_requests')).toBe(0);
    expect(await resetEvents()).toBe(5);
    const tokens = await ds.query<Array<{ user_id: string }>>(`SELECT user_id FROM email_action_tokens WHERE user_id = ANY($1::uuid[])`, [known.map((a) => a.userId)]);
    expect(tokens.map((t) => t.user_id).sort()).toEqual(known.map((a) => a.userId).sort());
  });

  it('competing replicas process 200 requests: each exactly once', async () => {
    const many = Array.from({ length: 200 }, account);
    const uc = useCases();
    for (const a of many) await uc.requestPasswordReset(a.email);
    const replicas = [useCases(), useCases(), useCases()];
    await Promise.all(replicas.map(async (r) => {
      while ((await r.processRequests(20)) > 0);
    }));
    expect(await resetEvents()).toBe(200);
    const perUser = await ds.query<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM email_action_tokens WHERE user_id = ANY($1::uuid[]) GROUP BY user_id`,
      [many.map((a) => a.userId)],
    );
    expect(perUser).toHaveLength(200);
    expect(perUser.every((p) => p.n === '1')).toBe(true);
  });

  it('the directory unreachable: the request is kept (attempts counted, tried later), then issued once', async () => {
    const a = account();
    const uc = useCases();
    await uc.requestPasswordReset(a.email);
    directoryDown = true;
    await uc.processRequests(50);
    const [row] = await ds.query<Array<{ attempts: number; last_error: string; due_in: number }>>(
      'SELECT attempts, last_error, extract(epoch FROM next_attempt_at - now()) AS due_in FROM email_action_requests',
    );
    expect(row).toMatchObject({ attempts: 1, last_error: expect.stringContaining('unreachable') });
    expect(Number(row!.due_in)).toBeGreaterThan(0);
    expect(await uc.processRequests(50)).toBe(0); // not due yet
    directoryDown = false;
    await ds.query('UPDATE email_action_requests SET next_attempt_at = now()');
    await drain(uc);
    expect(await resetEvents()).toBe(1);
    expect(await count('SELECT count(*) AS n FROM email_action_requests')).toBe(0);
  });

  it.each([
    ['a refusal (VALIDATION)', () => AppError.validation('The email is not valid.')],
    ['an internal error of the directory', () => new AppError('INTERNAL', 'An unexpected error occurred.')],
  ])('a permanent failure, %s: dead-lettered at its first failure (event, metric), never retried', async (_name, refusal) => {
    const a = account();
    const uc = useCases();
    await uc.requestPasswordReset(a.email);
    const before = (await metrics.registry.getSingleMetric('work_dead_lettered_total')?.get())?.values.find((v) => v.labels.work === 'email_action_request')?.value ?? 0;
    directoryRefuses = refusal();
    expect(await uc.processRequests(50)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM email_action_requests')).toBe(0);
    const [dead] = await ds.query<Array<{ id: string; payload: Buffer }>>('SELECT id, payload FROM outbox_events WHERE subject = $1', [SUBJECTS.emailActionRequestDeadLettered]);
    const payload = decodeEvent(SUBJECTS.emailActionRequestDeadLettered, dead!.payload);
    expect(payload).toMatchObject({ purpose: 'password_reset', attempts: 1, error: directoryRefuses.message });
    expect(dead!.id).toBeDefined();
    expect(dead!.payload.toString('latin1')).not.toContain(a.email);
    const after = (await metrics.registry.getSingleMetric('work_dead_lettered_total')?.get())?.values.find((v) => v.labels.work === 'email_action_request')?.value ?? 0;
    expect(after).toBe(before + 1);
    expect(await resetEvents()).toBe(0);
  });

  it('the per-email limit still answers 429 before anything is recorded', async () => {
    const uc = useCases(2);
    const email = `nobody-${randomUUID()}@example.com`;
    await uc.requestPasswordReset(email);
    await uc.requestPasswordReset(email);
    await expect(uc.requestPasswordReset(email)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(await count('SELECT count(*) AS n FROM email_action_requests')).toBe(2);
  });

  it('email verification: recorded, then issued once; nothing for an account verified meanwhile', async () => {
    const a = account();
    const b = account();
    const uc = useCases();
    await uc.requestEmailVerification(a.userId);
    await uc.requestEmailVerification(b.userId);
    accounts.set(b.email, { ...b, emailVerified: true });
    await drain(useCases());
    expect(await count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.emailVerificationRequested])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM email_action_tokens WHERE user_id = $1', [b.userId])).toBe(0);
  });

  it('confirm while the directory cannot answer: 503-class error and nothing changed (token pending, sessions live, no event)', async () => {
    const a = account();
    const uc = useCases();
    await uc.requestPasswordReset(a.email);
    await drain(uc);
    // The raw token exists only in the sealed event; make a known one pending for this user instead.
    const raw = randomBytes(32).toString('base64url');
    await ds.query(`UPDATE email_action_tokens SET token_hash = $2 WHERE user_id = $1`, [a.userId, sha256(raw)]);
    await ds.query(`INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4, now() + interval '1 hour')`, [randomUUID(), randomUUID(), a.userId, randomBytes(32)]);
    const events = await count('SELECT count(*) AS n FROM outbox_events');
    await expect(uc.confirmPasswordReset(raw, 'A-Strong-Passw0rd!')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await count('SELECT count(*) AS n FROM email_action_tokens WHERE user_id = $1 AND used_at IS NULL', [a.userId])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL', [a.userId])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM outbox_events')).toBe(events);
  });
});
