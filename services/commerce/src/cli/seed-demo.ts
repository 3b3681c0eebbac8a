/**
 * `--seed-demo`: writes the demo catalog into an empty catalog (COMMERCE_DATABASE_URL), then
 * exits. Migrates the database first, so it works on an empty one; safe to run twice.
 */
import { type Env, createLogger, openDatabase, readConfig } from '@iam/platform';
import { seedDemoCatalog } from '../app/seed-demo';
import { readCommerceConfig } from '../config';
import { entities, migrations } from '../infra/schema';

/** Returns the process exit code. */
export async function runSeedDemo(env: Env): Promise<number> {
  let config: ReturnType<typeof readCommerceConfig>;
  try {
    config = readConfig(env, (e) => readCommerceConfig(e));
  } catch (err) {
    process.stderr.write(`seed-demo: ${(err as Error).message}\n`);
    return 2;
  }
  const logger = createLogger({ level: 'warn', service: 'commerce' });
  const ds = await openDatabase({ url: config.databaseUrl, name: 'commerce', entities, migrations, logger });
  try {
    const n = await seedDemoCatalog(ds);
    process.stdout.write(n > 0 ? `seeded ${n} demo products\n` : 'the catalog is not empty: nothing seeded\n');
    return 0;
  } finally {
    await ds.destroy();
  }
}
