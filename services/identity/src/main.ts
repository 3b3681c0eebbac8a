#!/usr/bin/env node
// The identity service as its own process (one per container), or `migrate` (one-shot: the schema
// step), or `reseal` (one-shot: the end of a key-encryption key rotation, infra/reseal.ts).
import { runMigrate, runStandalone } from '@iam/platform';
import { readIdentityConfig } from './config';
import { identityService } from './service';
import { entities, migrations } from './infra/schema';
import { runReseal } from './infra/reseal';

if (process.argv[2] === 'migrate') {
  void runMigrate({ name: 'identity', entities, migrations }).then((code) => process.exit(code));
} else if (process.argv[2] === 'reseal') {
  void runReseal().then((code) => process.exit(code));
} else {
  void runStandalone({ name: 'identity', readConfig: (e) => readIdentityConfig(e), spec: identityService });
}
