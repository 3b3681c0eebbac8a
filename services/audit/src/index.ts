export { readAuditConfig, type AuditConfig } from './config';
export { auditService } from './service';
export { entities as auditEntities, migrations as auditMigrations } from './infra/schema';
export { encodeCursor as encodeAuditCursor } from './app/query';
