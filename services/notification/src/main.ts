#!/usr/bin/env node
// The notification service as its own process (one per container), or `migrate` (one-shot: the schema step).
import { runMigrate, runStandalone } from '@iam/platform';
import { readNotificationConfig } from './config';
import { notificationService } from './service';
import { entities, migrations } from './infra/schema';

if (process.argv[2] === 'migrate') {
  void runMigrate({ name: 'notification', entities, migrations }).then((code) => process.exit(code));
} else {
  void runStandalone({ name: 'notification', readConfig: (e) => readNotificationConfig(e), spec: notificationService });
}
