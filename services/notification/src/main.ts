#!/usr/bin/env node
// The notification service as its own process (one per container).
import { runStandalone } from '@iam/platform';
import { readNotificationConfig } from './config';
import { notificationService } from './service';

void runStandalone({ name: 'notification', readConfig: (e) => readNotificationConfig(e), spec: notificationService });
