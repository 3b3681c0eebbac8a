import { CreateOutbox1763800000000, OutboxEventRow, OutboxHeaders1764200000200, OutboxLease1764900000000 } from '@iam/platform';
import { AuditTrail1764200000000 } from './migrations/1764200000000-audit-trail';
import { AuditLeastPrivilege1764300000300 } from './migrations/1764300000300-audit-least-privilege';
import { AuditTimeOrder1764300000500 } from './migrations/1764300000500-audit-time-order';
import { AuditPurgeGuard1764600000000 } from './migrations/1764600000000-audit-purge-guard';

// Raw SQL only (no entities of its own); the outbox table is the platform's (its relay runs in every service).
export const entities = [OutboxEventRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, AuditTrail1764200000000, OutboxHeaders1764200000200, AuditLeastPrivilege1764300000300, AuditTimeOrder1764300000500, AuditPurgeGuard1764600000000, OutboxLease1764900000000];
