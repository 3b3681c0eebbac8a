/**
 * `--create-admin`: creates (or updates) an account holding the Administrator role, before the
 * first login. Flags `--email --password --first-name --last-name`, or ADMIN_EMAIL,
 * ADMIN_PASSWORD, ADMIN_FIRST_NAME, ADMIN_LAST_NAME (each also as `_FILE`, a file holding it).
 * Safe to run twice. With `--if-missing` an account that already has the email is left as it is
 * (password, names and roles): the chart's Job runs it on every upgrade, and an administrator who
 * changed the password keeps it. Migrates the database first, so it works on an empty one.
 */
import { parseArgs } from 'node:util';
import { AppError, type Env, createLogger, openDatabase, readConfig } from '@iam/platform';
import { readDirectoryConfig } from '../config';
import { entities, migrations } from '../infra/schema';
import { createDirectoryUseCases } from '../service';

export interface AdminInput {
  email: string;
  password: string;
  firstName?: string;
  lastName?: string;
  /** `--if-missing`: create the account only; an existing one is left unchanged. */
  ifMissing: boolean;
}

export function readAdminInput(argv: readonly string[], env: Env): AdminInput {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      'create-admin': { type: 'boolean' },
      'if-missing': { type: 'boolean' },
      email: { type: 'string' },
      password: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
    },
    strict: true,
  });
  const fromEnv = readConfig(env, (e) => ({
    email: e.optionalString('ADMIN_EMAIL'),
    password: e.optionalString('ADMIN_PASSWORD'),
    firstName: e.optionalString('ADMIN_FIRST_NAME'),
    lastName: e.optionalString('ADMIN_LAST_NAME'),
  }));
  const email = values.email ?? fromEnv.email;
  const password = values.password ?? fromEnv.password;
  const missing = [!email && '--email (or ADMIN_EMAIL)', !password && '--password (or ADMIN_PASSWORD)'].filter(Boolean);
  if (missing.length > 0) throw new AppError('VALIDATION', `missing ${missing.join(' and ')}`);
  return {
    email: email!,
    password: password!,
    firstName: values['first-name'] ?? fromEnv.firstName,
    lastName: values['last-name'] ?? fromEnv.lastName,
    ifMissing: values['if-missing'] ?? false,
  };
}

/** Returns the process exit code. */
export async function runCreateAdmin(argv: readonly string[], env: Env): Promise<number> {
  let input: AdminInput;
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
    const { ifMissing, ...account } = input;
    const { user, created } = await createDirectoryUseCases(ds, config).credentials.ensureAdministrator(account, { ifMissing });
    const outcome = created ? 'created' : ifMissing ? 'left unchanged (--if-missing): existing' : 'updated';
    process.stdout.write(`${outcome} administrator ${user.email} (${user.id})\n`);
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
