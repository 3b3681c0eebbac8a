#!/usr/bin/env node
// The audit service as its own process (one per container), or `migrate` (one-shot: the schema step).
import { runMigrate, runStandalone } from '@iam/platform';
import { readAuditConfig } from './config';
import { afterMigrate } from './infra/privileges';
import { entities, migrations } from './infra/schema';
import { auditService } from './service';

if (process.argv[2] === 'migrate') {
  void runMigrate({ name: 'audit', entities, migrations, afterMigrate }).then((code) => process.exit(code));
} else {
  void runStandalone({ name: 'audit', readConfig: (e) => readAuditConfig(e), spec: auditService });
}
