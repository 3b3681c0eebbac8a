#!/usr/bin/env node
/**
 * The identity service with fault injection, for the fault suite only (deploy/all-in-one/test/
 * faults): the same process as ../main.ts plus a hook that kills it between a refresh's commit
 * and its answer. Never used by an image, the chart or `make run`.
 *
 *   IDENTITY_FAULT_KILL_AFTER_REFRESH_COMMIT=n      SIGKILL itself after the n-th committed rotation
 *   IDENTITY_FAULT_KILL_AFTER_OP_REFRESH_COMMIT=n   the same for the provider's refresh rotations
 */
import { runStandalone } from '@iam/platform';
import { readIdentityConfig } from '../config';
import { identityService } from '../service';

const killAfter = Number(process.env.IDENTITY_FAULT_KILL_AFTER_REFRESH_COMMIT ?? 0);
const killAfterOp = Number(process.env.IDENTITY_FAULT_KILL_AFTER_OP_REFRESH_COMMIT ?? 0);
let commits = 0;
let opCommits = 0;

void runStandalone({
  name: 'identity',
  readConfig: (e) => readIdentityConfig(e),
  spec: (config, rt) =>
    identityService(config, rt, {
      faults: {
        afterRefreshCommit: () => {
          if (killAfter > 0 && ++commits === killAfter) process.kill(process.pid, 'SIGKILL');
        },
        afterOpRefreshCommit: () => {
          if (killAfterOp > 0 && ++opCommits === killAfterOp) process.kill(process.pid, 'SIGKILL');
        },
      },
    }),
});
