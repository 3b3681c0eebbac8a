#!/usr/bin/env node
// The commerce service as its own process (one per container), `migrate` (one-shot: the schema step) or `--seed-demo` (one-shot).
import { runMigrate, runStandalone } from '@iam/platform';
import { runSeedDemo } from './cli/seed-demo';
import { readCommerceConfig } from './config';
import { commerceService } from './service';
import { entities, migrations } from './infra/schema';

if (process.argv[2] === 'migrate') {
  void runMigrate({ name: 'commerce', entities, migrations }).then((code) => process.exit(code));
} else if (process.argv.includes('--seed-demo')) {
  runSeedDemo(process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`seed-demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
} else {
  void runStandalone({ name: 'commerce', readConfig: (e) => readCommerceConfig(e), spec: commerceService });
}
