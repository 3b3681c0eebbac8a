/**
 * The signed checkpoints on the event bus: `audit.checkpoint.signed` events on the stream
 * AUDIT_CHECKPOINTS, which has a retention of its own and lives outside the audit database (the
 * JetStream server, or the in-process bus of `make run`). A checkpoint's message id is its key,
 * seq and hash, so the checkpoint two replicas sign for the same head is stored once.
 */
import { STREAMS, SUBJECTS, decodeEvent, encodeEvent } from '@iam/contracts';
import type { EventBus, IncomingEvent } from '@iam/platform/bus';
import type { Checkpoint } from '../domain/checkpoint';
import type { CheckpointLog } from '../domain/ports';

function checkpointOf(e: IncomingEvent): Checkpoint | undefined {
  if (e.subject !== SUBJECTS.auditCheckpointSigned) return undefined;
  try {
    const m = decodeEvent(SUBJECTS.auditCheckpointSigned, e.data);
    if (!m.signedAt || !Number.isSafeInteger(m.seq) || m.seq < 1) return undefined;
    return { seq: m.seq, hash: m.hash, signedAt: m.signedAt, keyId: m.keyId, signature: Buffer.from(m.signature).toString('base64') };
  } catch {
    return undefined; // not a checkpoint at all: nothing to hold the chain against
  }
}

export class BusCheckpointLog implements CheckpointLog {
  constructor(private readonly bus: EventBus) {}

  async publish(c: Checkpoint): Promise<void> {
    const payload = { seq: c.seq, hash: c.hash, signedAt: c.signedAt, keyId: c.keyId, signature: Buffer.from(c.signature, 'base64') };
    await this.bus.publish({
      id: `audit-checkpoint:${c.keyId}:${c.seq}:${c.hash}`,
      subject: SUBJECTS.auditCheckpointSigned,
      data: encodeEvent(SUBJECTS.auditCheckpointSigned, payload),
      occurredAt: c.signedAt,
    });
  }

  async read(limit: number): Promise<Checkpoint[]> {
    const events = await this.bus.read(STREAMS.auditCheckpoints, { limit });
    return events.map(checkpointOf).filter((c): c is Checkpoint => c !== undefined);
  }
}
