#!/usr/bin/env node
// The commerce service as its own process (one per container), or `--seed-demo` (one-shot).
import { runStandalone } from '@iam/platform';
import { runSeedDemo } from './cli/seed-demo';
import { readCommerceConfig } from './config';
import { commerceService } from './service';

if (process.argv.includes('--seed-demo')) {
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
