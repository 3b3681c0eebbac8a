#!/usr/bin/env node
// The identity service as its own process (one per container), or `migrate` (one-shot: the schema step).
import { runMigrate, runStandalone } from '@iam/platform';
import { readIdentityConfig } from './config';
import { identityService } from './service';
import { entities, migrations } from './infra/schema';

if (process.argv[2] === 'migrate') {
  void runMigrate({ name: 'identity', entities, migrations }).then((code) => process.exit(code));
} else {
  void runStandalone({ name: 'identity', readConfig: (e) => readIdentityConfig(e), spec: identityService });
}
