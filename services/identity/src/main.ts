#!/usr/bin/env node
// The identity service as its own process (one per container).
import { runStandalone } from '@iam/platform';
import { readIdentityConfig } from './config';
import { identityService } from './service';

void runStandalone({ name: 'identity', readConfig: (e) => readIdentityConfig(e), spec: identityService });
