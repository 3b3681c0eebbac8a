/**
 * The audit trail (`audit.read`; registered inside `requiring('audit.read', ...)`): entries newest
 * first with filters and keyset pages, and the hash chain's verification. The audit service owns
 * both and checks the caller's audit.read again against the directory (a reader demoted since
 * their token was issued is refused: 403); the gateway maps shapes only.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { auditV1 } from '@iam/contracts';
import { AUDIT_PAGE_SIZE_DEFAULT, AuditPage, AuditQuery, ChainReport } from '../schemas/audit';
import { problems } from '../schemas/common';
import type { Upstreams } from '../upstreams';

const parse = (json: string): unknown => (json === '' ? undefined : JSON.parse(json));
const orNull = (s: string): string | null => (s === '' ? null : s);

const ACTOR_TYPES = ['user', 'system', 'anonymous'] as const;

/** An actor type the schema lists; another is a fault of ours (500, as the serializer answered it). */
function actorType(type: string): (typeof ACTOR_TYPES)[number] {
  const known = ACTOR_TYPES.find((t) => t === type);
  if (known === undefined) throw new Error(`unknown audit actor type "${type}"`);
  return known;
}

function eventJson(e: auditV1.AuditEvent) {
  return {
    id: e.id,
    seq: e.seq,
    // The audit service sets both on every entry.
    occurredAt: e.occurredAt!,
    recordedAt: e.recordedAt!,
    actor: { type: actorType(e.actor?.type ?? 'system'), id: orNull(e.actor?.id ?? ''), email: orNull(e.actor?.email ?? '') },
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


export interface AuditRoutesOptions {
  readonly upstreams: Pick<Upstreams, 'audit'>;
}

export const auditRoutes: FastifyPluginAsyncTypebox<AuditRoutesOptions> = async (app, { upstreams }) => {
  const tags = ['audit'];
  app.get(
    '/api/v1/audit-events',
    { schema: { tags, summary: 'The audit trail, newest first (filters, keyset pages)', querystring: AuditQuery, response: { 200: AuditPage, ...problems(400) } } },
    async (req) => {
      const q = req.query;
      const page = await upstreams.audit.listAuditEvents(
        {
          pageSize: q.pageSize ?? AUDIT_PAGE_SIZE_DEFAULT,
          cursor: q.cursor ?? '',
          actorId: q.actorId ?? '',
          targetId: q.targetId ?? '',
          action: q.action ?? '',
          from: q.from === undefined ? undefined : new Date(q.from),
          to: q.to === undefined ? undefined : new Date(q.to),
        },
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
    async () => {
      const v = await upstreams.audit.verifyAuditChain({});
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
