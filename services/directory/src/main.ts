#!/usr/bin/env node
// The directory service as its own process (one per container), `migrate` (one-shot: the schema step), `--create-admin` or `--import FILE` (one-shot).
import { runMigrate, runStandalone } from '@iam/platform';
import { runCreateAdmin } from './cli/create-admin';
import { runImport } from './cli/import-users';
import { readDirectoryConfig } from './config';
import { directoryService } from './service';
import { entities, migrations } from './infra/schema';

if (process.argv[2] === 'migrate') {
  void runMigrate({ name: 'directory', entities, migrations }).then((code) => process.exit(code));
} else if (process.argv.includes('--create-admin')) {
  runCreateAdmin(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`create-admin failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
} else if (process.argv.includes('--import')) {
  runImport(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`import failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
} else {
  void runStandalone({ name: 'directory', readConfig: (e) => readDirectoryConfig(e), spec: directoryService });
}
