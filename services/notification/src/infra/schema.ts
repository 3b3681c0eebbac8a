import { CreateOutbox1763800000000, OutboxEventRow } from '@iam/platform';

export const entities = [OutboxEventRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000];
