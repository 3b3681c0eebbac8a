/**
 * PostgreSQL store of the email actions' recorded requests, which the request worker claims
 * (services/identity/README.md, "Email actions: what a 202 promises").
 */
import { type RequestContext, captureOrigin } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { EmailActionRequest, EmailActionRequestStore, EmailPurpose } from '../domain/ports';

export class PgEmailActionRequests implements EmailActionRequestStore {
  constructor(private readonly m: EntityManager) {}

  async enqueue(r: { id: string; purpose: EmailPurpose; emailHash: Buffer; sealedEmail?: Buffer; userId?: string }): Promise<void> {
    // The request's trace and context go with it (captureOrigin): its event, issued later by the
    // worker, continues the trace and names the client.
    const origin = captureOrigin();
    await this.m.query(
      'INSERT INTO email_action_requests (id, purpose, email_hash, sealed_email, user_id, traceparent, context) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [r.id, r.purpose, r.emailHash, r.sealedEmail ?? null, r.userId ?? null, origin.traceparent ?? null, origin.context ? JSON.stringify(origin.context) : null],
    );
  }

  async claimDue(limit: number): Promise<EmailActionRequest[]> {
    const rows = await this.m.query<Array<{
      id: string;
      purpose: EmailPurpose;
      email_hash: Buffer;
      sealed_email: Buffer | null;
      user_id: string | null;
      created_at: Date;
      attempts: number;
      traceparent: string | null;
      context: RequestContext | null;
    }>>(
      `SELECT id, purpose, email_hash, sealed_email, user_id, created_at, attempts, traceparent, context FROM email_action_requests
        WHERE next_attempt_at <= now() ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map((r) => ({
      id: r.id,
      purpose: r.purpose,
      emailHash: r.email_hash,
      sealedEmail: r.sealed_email,
      userId: r.user_id,
      createdAt: r.created_at,
      attempts: r.attempts,
      origin: { traceparent: r.traceparent ?? undefined, context: r.context ?? undefined },
    }));
  }

  async complete(id: string): Promise<void> {
    await this.m.query('DELETE FROM email_action_requests WHERE id = $1', [id]);
  }

  async retryLater(id: string, delayMs: number, error: string): Promise<void> {
    await this.m.query(
      `UPDATE email_action_requests SET attempts = attempts + 1, last_error = $3,
              next_attempt_at = now() + ($2::bigint * interval '1 millisecond') WHERE id = $1`,
      [id, delayMs, error.slice(0, 500)],
    );
  }
}
