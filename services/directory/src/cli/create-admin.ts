/**
 * `--create-admin`: creates (or updates) an account holding the Administrator role, before the
 * first login. Flags `--email --password --first-name --last-name`, or ADMIN_EMAIL,
 * ADMIN_PASSWORD, ADMIN_FIRST_NAME, ADMIN_LAST_NAME. Safe to run twice. Migrates the database
 * first, so it works on an empty one.
 */
import { parseArgs } from 'node:util';
import { AppError, type Env, createLogger, openDatabase, readConfig } from '@iam/platform';
import { readDirectoryConfig } from '../config';
import { entities, migrations } from '../infra/schema';
import { createDirectoryUseCases } from '../service';

export function readAdminInput(argv: readonly string[], env: Env): { email: string; password: string; firstName?: string; lastName?: string } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      'create-admin': { type: 'boolean' },
      email: { type: 'string' },
      password: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
    },
    strict: true,
  });
  const email = values.email ?? env.ADMIN_EMAIL;
  const password = values.password ?? env.ADMIN_PASSWORD;
  const missing = [!email && '--email (or ADMIN_EMAIL)', !password && '--password (or ADMIN_PASSWORD)'].filter(Boolean);
  if (missing.length > 0) throw new AppError('VALIDATION', `missing ${missing.join(' and ')}`);
  return {
    email: email!,
    password: password!,
    firstName: values['first-name'] ?? env.ADMIN_FIRST_NAME ?? undefined,
    lastName: values['last-name'] ?? env.ADMIN_LAST_NAME ?? undefined,
  };
}

/** Returns the process exit code. */
export async function runCreateAdmin(argv: readonly string[], env: Env): Promise<number> {
  let input: ReturnType<typeof readAdminInput>;
  let config: ReturnType<typeof readDirectoryConfig>;
  try {
    input = readAdminInput(argv, env);
    config = readConfig(env, (e) => readDirectoryConfig(e));
  } catch (err) {
    process.stderr.write(`create-admin: ${(err as Error).message}\n`);
    return 2;
  }
  const logger = createLogger({ level: 'warn', service: 'directory' });
  const ds = await openDatabase({ url: config.databaseUrl, name: 'directory', entities, migrations, logger });
  try {
    const { user, created } = await createDirectoryUseCases(ds, config).credentials.ensureAdministrator(input);
    process.stdout.write(`${created ? 'created' : 'updated'} administrator ${user.email} (${user.id})\n`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      const fields = (err.errors ?? []).map((e) => `\n  ${e.field}: ${e.message}`).join('');
      process.stderr.write(`create-admin: ${err.detail ?? err.title}${fields}\n`);
      return 1;
    }
    throw err;
  } finally {
    await ds.destroy();
  }
}
