/**
 * Jest global setup: tests use the real PostgreSQL and NATS JetStream when they are reachable
 * (127.0.0.1:5432 and :4222, or TEST_DATABASE_URL / TEST_NATS_URL), otherwise an embedded
 * PostgreSQL and the in-process bus, so `make test` also passes on a machine with neither.
 * Workers read the choice from IAM_TEST_PG_URL / IAM_TEST_NATS_URL. It also makes the directory
 * where test files record what they skip (IAM_TEST_SKIPS_DIR, skips.ts).
 */
import { connect } from 'node:net';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../embedded-postgres';
import { SKIPS_DIR_ENV } from './skips';

declare global {
  // Shared between global setup and teardown (`declare global` needs a `var`).
  var __IAM_EMBEDDED_PG__: EmbeddedPostgresHandle | undefined;
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port, timeout: 500 }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
    s.on('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

export default async function setup(): Promise<void> {
  // Where test files record what they skip (skips.ts); the teardown prints it in one line.
  process.env[SKIPS_DIR_ENV] = mkdtempSync(join(tmpdir(), 'iam-test-skips-'));
  const pgUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const pg = new URL(pgUrl);
  if (await reachable(pg.hostname, Number(pg.port || 5432))) {
    process.env.IAM_TEST_PG_URL = pgUrl;
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'iam-test-pg-'));
    chmodSync(dir, 0o755); // the embedded server may run as another OS user (when tests run as root)
    const port = 54330 + Math.floor(Math.random() * 500);
    const handle = await startEmbeddedPostgres({ dir, port, ephemeral: true });
    globalThis.__IAM_EMBEDDED_PG__ = handle;
    process.env.IAM_TEST_PG_URL = handle.url('postgres');
    process.stderr.write(`\n[tests] no PostgreSQL at ${pg.host}: using an embedded one on port ${port}\n`);
  }
  const natsUrl = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  const nats = new URL(natsUrl);
  if (await reachable(nats.hostname, Number(nats.port || 4222))) {
    process.env.IAM_TEST_NATS_URL = natsUrl;
  } else {
    delete process.env.IAM_TEST_NATS_URL;
    process.stderr.write(`[tests] no NATS at ${nats.host}: JetStream tests are skipped, the in-process bus is used\n`);
  }
}
