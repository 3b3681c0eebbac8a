#!/usr/bin/env node
// The directory service as its own process (one per container), or `--create-admin` (one-shot).
import { runStandalone } from '@iam/platform';
import { runCreateAdmin } from './cli/create-admin';
import { readDirectoryConfig } from './config';
import { directoryService } from './service';

if (process.argv.includes('--create-admin')) {
  runCreateAdmin(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`create-admin failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
} else {
  void runStandalone({ name: 'directory', readConfig: (e) => readDirectoryConfig(e), spec: directoryService });
}
