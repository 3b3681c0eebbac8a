/**
 * The audit service: durable consumers of every directory, identity and commerce event, each
 * recorded once as a hash-chained, append-only entry; the chain's head signed (Ed25519) and
 * published outside the database as checkpoints; the trail's queries and its verification
 * against those checkpoints over gRPC; retention. No other service writes to its database.
 */
import { STREAMS } from '@iam/contracts';
import { type ServiceRuntime, type ServiceSpec, grpcAccessCheck, outboxUnitOfWork } from '@iam/platform';
import { auditGrpc } from './api/grpc';
import { createCheckpointer } from './app/checkpoints';
import { auditQueries } from './app/query';
import { forReaders } from './app/readers';
import { AUDITED_SUBJECTS, RECORD_BATCH_MAX, createRecorder } from './app/record';
import { startRetention } from './app/retention';
import type { AuditConfig } from './config';
import { checkpointSigner } from './domain/checkpoint';
import type { AuditUnitOfWork } from './domain/ports';
import { BusCheckpointLog } from './infra/checkpoint-log';
import { entities, migrations } from './infra/schema';
import { afterMigrate, setRetentionDays } from './infra/privileges';
import { PgAuditLog, PgProjection } from './infra/store';

/** Events are recorded in order per stream (the projection's before/after depends on it). */
const CONSUMERS = [
  { name: 'audit-directory', stream: STREAMS.directory, subjects: [AUDITED_SUBJECTS[0]] },
  { name: 'audit-identity', stream: STREAMS.identity, subjects: [AUDITED_SUBJECTS[1]] },
  { name: 'audit-commerce', stream: STREAMS.commerce, subjects: [AUDITED_SUBJECTS[2]] },
  { name: 'audit-notification', stream: STREAMS.notification, subjects: [AUDITED_SUBJECTS[3]] },
] as const;

export function auditService(config: AuditConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'audit',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.directory, STREAMS.identity, STREAMS.commerce, STREAMS.notification, STREAMS.deadLetter, STREAMS.auditCheckpoints],
    afterMigrate,
    build: async ({ dataSource, bus, logger }) => {
      const uow: AuditUnitOfWork = outboxUnitOfWork(dataSource, (m) => ({ log: new PgAuditLog(m), projection: new PgProjection(m) }));
      // The migrate step sets the retention (the runtime role may not; make run runs that step too);
      // a service running as the owner (tests, a URL without a runtime role) sets it here as well.
      await setRetentionDays(dataSource, config.retention.days).catch((err: unknown) =>
        logger.debug({ err: (err as Error).message }, 'audit: retention left as the migrate step set it'),
      );
      const signer = checkpointSigner(config.checkpoints.signingKey);
      logger.info(
        { keyId: signer.keyId, publicKey: signer.publicKey, every: config.checkpoints.every, intervalMs: config.checkpoints.intervalMs },
        'audit checkpoints: the chain head is signed with this key; its public key verifies the trail',
      );
      const checkpointLog = new BusCheckpointLog(bus);
      const checkpointer = createCheckpointer({ uow, log: checkpointLog, signer, logger }, config.checkpoints);
      const recordOne = createRecorder(uow);
      const record = async (e: Parameters<typeof recordOne>[0]) => {
        await recordOne(e);
        checkpointer.appended();
      };
      const stopRetention = startRetention(uow, config.retention, logger);
      const queries = auditQueries(uow, { checkpoints: checkpointLog, key: signer, retentionDays: config.retention.days });
      // Readers are authorized on their current rights (the directory's AccessService).
      const access = grpcAccessCheck({ target: config.directoryTarget, metrics: rt.metrics, signer: { key: rt.callKey, from: 'audit' }, credentials: rt.grpcClientCredentials });
      return {
        grpc: auditGrpc(forReaders(queries, access), { logger: rt.logger, metrics: rt.metrics, service: 'audit', callKey: rt.callKey, peerNames: rt.grpcPeerNames }),
        // The trail must not lose an event: many deliveries, long backoff. Handed to the recorder in
        // stream order, which commits them in groups of up to RECORD_BATCH_MAX (app/record.ts); the
        // deliveries outstanding at once are bounded by that too, across every replica.
        consumers: CONSUMERS.map((c) => ({
          ...c,
          handler: record,
          concurrency: RECORD_BATCH_MAX,
          maxAckPending: RECORD_BATCH_MAX,
          maxDeliver: 50,
          backoffMs: [1_000, 5_000, 30_000, 120_000, 600_000],
        })),
        // A last checkpoint on the way out: a clean stop leaves no entry unsigned.
        stop: async () => {
          await stopRetention();
          await checkpointer.checkpoint().catch(() => undefined);
          await checkpointer.stop();
          access.close();
        },
      };
    },
  };
}
