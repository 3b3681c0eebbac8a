import { auditV1 } from '@iam/contracts';
import { type HandlerDeps, type ServiceBinding, actorOf, bindService } from '@iam/platform';
import type { AuditQueries } from '../app/query';
import type { ForReader } from '../app/readers';
import type { AuditEntry } from '../domain/entry';

const json = (v: unknown): string => (v === undefined ? '' : JSON.stringify(v));

const toProto = (e: AuditEntry): auditV1.AuditEvent => ({
  id: e.id,
  seq: e.seq,
  occurredAt: e.occurredAt,
  recordedAt: e.recordedAt,
  actor: { type: e.actor.type, id: e.actor.id ?? '', email: e.actor.email ?? '' },
  action: e.action,
  target: { type: e.target.type, id: e.target.id },
  changes: e.changes.map((c) => ({ field: c.field, beforeJson: json(c.before), afterJson: json(c.after), redacted: c.redacted ?? false })),
  traceId: e.traceId ?? '',
  clientIp: e.clientIp ?? '',
  userAgent: e.userAgent ?? '',
  eventId: e.eventId,
  prevHash: e.prevHash,
  hash: e.hash,
});

/** The trail for the gateway and operators, each call for the audit.read holder its call assertion names. */
export function auditGrpc(q: ForReader<AuditQueries>, h: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      auditV1.AuditServiceService,
      {
        listAuditEvents: async (r, ctx) => {
          const page = await q.list(actorOf(ctx), {
            pageSize: r.pageSize || 25,
            cursor: r.cursor || undefined,
            actorId: r.actorId || undefined,
            targetId: r.targetId || undefined,
            action: r.action || undefined,
            from: r.from,
            to: r.to,
          });
          return { items: page.items.map(toProto), nextCursor: page.nextCursor ?? '' };
        },
        verifyAuditChain: async (_r, ctx) => {
          const v = await q.verify(actorOf(ctx));
          return {
            ok: v.ok,
            checked: v.checked,
            brokenAtSeq: v.brokenAtSeq ?? 0,
            reason: v.reason ?? '',
            firstSeq: v.firstSeq,
            checkpointSeq: v.checkpoint?.seq ?? 0,
            checkpointHash: v.checkpoint?.hash ?? '',
            checkpointSignedAt: v.checkpoint?.signedAt,
            checkpointsChecked: v.checkpointsChecked,
            checkpointsRejected: v.checkpointsRejected,
            unsignedEntries: v.unsignedEntries,
            keyId: v.keyId,
            publicKey: v.publicKey,
          };
        },
      },
      h,
      ['gateway'],
    ),
  ];
}
