#!/usr/bin/env node
// The directory service as its own process (one per container).
import { runStandalone } from '@iam/platform';
import { readDirectoryConfig } from './config';
import { directoryService } from './service';

void runStandalone({ name: 'directory', readConfig: (e) => readDirectoryConfig(e), spec: directoryService });
