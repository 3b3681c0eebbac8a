/// <reference types="jest" />
/**
 * The directory's use cases over a fresh migrated database on the real PostgreSQL, built by the
 * composition root (createDirectoryUseCases, argon2id at its cheapest parameters), for the tests
 * of src/app: an Administrator to act as, actors holding chosen permissions, and the events the
 * use cases wrote to the outbox. Not part of the service: only tests import it.
 */
import { randomBytes } from 'node:crypto';
import { type EventSubject, decodeEvent } from '@iam/contracts';
import { AppError } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import type { DataSource } from 'typeorm';
import type { DirectoryUseCases } from '../app/use-cases';
import type { DirectoryConfig } from '../config';
import type { Actor } from '../domain/authorization';
import { ADMINISTRATOR_ROLE, type Role } from '../domain/model';
import { entities, migrations } from '../infra/schema';
import { createDirectoryUseCases } from '../service';
import { StubTxtResolver } from './stub-resolver';

/** A password the policy accepts. */
export const PASSWORD = 'Correct-Horse-9';

/** The EMAIL_ACTION_KEY of the fixture's directory: tests open invitation tokens from the events with it. */
export const INVITATION_SEAL_KEY = randomBytes(32);

/** argon2id at the lowest parameters the configuration allows: these tests are about rules, not cost. */
const CONFIG: DirectoryConfig = {
  databaseUrl: 'postgres://unused/db',
  grpcPort: 0,
  argon2: { memoryKiB: 8_192, iterations: 1, parallelism: 1 },
  hashConcurrency: 2,
  hashQueueLimit: 64,
  invitationSealKey: INVITATION_SEAL_KEY,
  invitationDays: 7,
  identityTarget: '127.0.0.1:1',
};

/** A short random suffix for names and emails, so tests sharing a database do not collide. */
export const unique = (): string => randomBytes(4).toString('hex');

/** How a call was refused: its AppError code and the fields it named. Throws when it was not refused so. */
export async function refusal(call: Promise<unknown>): Promise<{ code: string; fields: string[] }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, fields: (err.errors ?? []).map((e) => e.field) };
    throw err;
  }
  throw new Error('the call was not refused');
}

export interface OutboxEvent {
  readonly subject: string;
  readonly payload: Record<string, unknown>;
}

export class DirectoryFixture {
  private readonly seen = new Set<string>();
  private started: { db: MigratedDatabase; uc: DirectoryUseCases; admin: Actor & { email: string } } | undefined;

  /** The DNS TXT records domain verification sees. */
  readonly resolver = new StubTxtResolver();

  constructor(
    private readonly name: string,
    private readonly config: Partial<DirectoryConfig> = {},
  ) {}

  async start(): Promise<void> {
    const db = await migratedTestDatabase(this.name, { entities, migrations });
    const uc = createDirectoryUseCases(db.ds, { ...CONFIG, ...this.config }, undefined, this.resolver);
    const email = `admin-${unique()}@example.com`;
    const { user } = await uc.credentials.ensureAdministrator({ email, password: PASSWORD });
    this.started = { db, uc, admin: { userId: user.id, email } };
    await this.newEvents();
  }

  private get state(): NonNullable<DirectoryFixture['started']> {
    if (!this.started) throw new Error('the fixture has not started (directoryFixture starts it in beforeAll)');
    return this.started;
  }

  get ds(): DataSource {
    return this.state.db.ds;
  }

  get uc(): DirectoryUseCases {
    return this.state.uc;
  }

  /** An Administrator (made by ensureAdministrator), to act as. */
  get admin(): Actor & { email: string } {
    return this.state.admin;
  }

  /** A user holding exactly `permissions`, through a role of its own the Administrator made. */
  async actorHolding(...permissions: string[]): Promise<Actor & { email: string; role: string }> {
    const role = await this.uc.roles.create({ name: `holder-${unique()}` });
    for (const name of permissions) await this.uc.links.create(this.admin, { roleId: role.id, permissionId: await this.permissionId(name) });
    const email = `actor-${unique()}@example.com`;
    const user = await this.uc.users.create(this.admin, { firstName: 'Acting', lastName: 'User', email, password: PASSWORD, roles: [role.name] });
    await this.newEvents();
    return { userId: user.id, email, role: role.name };
  }

  /** The id of the live permission with this name (a new one, made by the Administrator, when there is none). */
  async permissionId(name: string): Promise<string> {
    const [row] = await this.ds.query<Array<{ id: string }>>('SELECT id FROM permissions WHERE name = $1 AND deleted_at IS NULL', [name]);
    return row?.id ?? (await this.uc.permissions.create({ name })).id;
  }

  /** The built-in Administrator role. */
  async administratorRole(): Promise<Role> {
    const [role] = (await this.uc.roles.list({ page: 1, pageSize: 1, q: ADMINISTRATOR_ROLE, includeDeleted: false })).items;
    return role!;
  }

  /** The events written to the outbox since the last call, decoded, in the order they were written. */
  async newEvents(): Promise<OutboxEvent[]> {
    const rows = await this.ds.query<Array<{ id: string; subject: string; payload: Buffer }>>('SELECT id, subject, payload FROM outbox_events ORDER BY occurred_at, subject');
    const fresh = rows.filter((r) => !this.seen.has(r.id));
    for (const r of fresh) this.seen.add(r.id);
    return fresh.map((r) => ({ subject: r.subject, payload: decodeEvent(r.subject as EventSubject, r.payload) as unknown as Record<string, unknown> }));
  }

  async close(): Promise<void> {
    await this.started?.db.close();
  }
}

/**
 * A fixture for the test file: started before its tests, closed after them, and each test begins
 * with no unseen event (what an earlier test left is read and dropped).
 */
export function directoryFixture(name: string, config: Partial<DirectoryConfig> = {}): DirectoryFixture {
  const fx = new DirectoryFixture(name, config);
  beforeAll(() => fx.start(), 60_000);
  afterAll(() => fx.close());
  beforeEach(async () => {
    await fx.newEvents();
  });
  return fx;
}
