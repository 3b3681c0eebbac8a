/**
 * The audit trail (`audit.read`; registered inside `requiring('audit.read', ...)`): entries newest
 * first with filters and keyset pages, and the hash chain's verification. The audit service owns
 * both and checks the caller's audit.read again against the directory (a reader demoted since
 * their token was issued is refused: 403); the gateway maps shapes only.
 */
import type { auditV1 } from '@iam/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AuditPage, AuditQuery, ChainReport } from '../schemas/audit';
import { problems } from '../schemas/common';
import type { Upstreams } from '../upstreams';

const parse = (json: string): unknown => (json === '' ? undefined : JSON.parse(json));
const orNull = (s: string): string | null => (s === '' ? null : s);

function eventJson(e: auditV1.AuditEvent) {
  return {
    id: e.id,
    seq: e.seq,
    occurredAt: e.occurredAt,
    recordedAt: e.recordedAt,
    actor: { type: e.actor?.type ?? 'system', id: orNull(e.actor?.id ?? ''), email: orNull(e.actor?.email ?? '') },
    action: e.action,
    target: { type: e.target?.type ?? '', id: e.target?.id ?? '' },
    changes: e.changes.map((c) => ({
      field: c.field,
      ...(c.redacted ? { redacted: true } : {}),
      ...(c.beforeJson ? { before: parse(c.beforeJson) } : {}),
      ...(c.afterJson ? { after: parse(c.afterJson) } : {}),
    })),
    traceId: orNull(e.traceId),
    clientIp: orNull(e.clientIp),
    userAgent: orNull(e.userAgent),
    eventId: e.eventId,
    prevHash: e.prevHash,
    hash: e.hash,
  };
}

/** The caller the audit service re-checks audit.read for (its rights now, not the token's). */
const reader = (req: FastifyRequest): string | undefined => req.principal?.sub;

export function auditRoutes(upstreams: Pick<Upstreams, 'audit'>) {
  return (app: FastifyInstance): void => {
    const tags = ['audit'];
    app.get(
      '/api/v1/audit-events',
      { schema: { tags, summary: 'The audit trail, newest first (filters, keyset pages)', querystring: AuditQuery, response: { 200: AuditPage, ...problems(400) } } },
      async (req) => {
        const q = req.query as { pageSize: number; cursor?: string; actorId?: string; targetId?: string; action?: string; from?: string; to?: string };
        const page = await upstreams.audit.listAuditEvents(
          {
            pageSize: q.pageSize,
            cursor: q.cursor ?? '',
            actorId: q.actorId ?? '',
            targetId: q.targetId ?? '',
            action: q.action ?? '',
            from: q.from === undefined ? undefined : new Date(q.from),
            to: q.to === undefined ? undefined : new Date(q.to),
          },
          { actor: reader(req) },
        );
        return { items: page.items.map(eventJson), nextCursor: orNull(page.nextCursor) };
      },
    );
    app.get(
      '/api/v1/audit-events/verify',
      {
        schema: {
          tags,
          summary: "Verify the audit trail's hash chain from its retained start and against its signed checkpoints: the first altered, missing or rewritten entry",
          response: { 200: ChainReport },
        },
      },
      async (req) => {
        const v = await upstreams.audit.verifyAuditChain({}, { actor: reader(req) });
        return {
          ok: v.ok,
          checked: v.checked,
          firstSeq: v.firstSeq,
          brokenAtSeq: v.ok ? null : v.brokenAtSeq,
          reason: v.ok ? null : v.reason,
          checkpoint: v.checkpointSeq > 0 && v.checkpointSignedAt ? { seq: v.checkpointSeq, hash: v.checkpointHash, signedAt: v.checkpointSignedAt } : null,
          checkpointsChecked: v.checkpointsChecked,
          checkpointsRejected: v.checkpointsRejected,
          unsignedEntries: v.unsignedEntries,
          keyId: v.keyId,
          publicKey: v.publicKey,
        };
      },
    );
  };
}
