/**
 * Organization tokens at the gateway (issue #41): a token carrying `org` (issued for one
 * organization) is accepted under `/api/v1/organizations/{id}/…` only when `{id}` is its
 * organization; another organization's path answers 404, as an organization the caller cannot
 * see does. Elsewhere in the organizations API (listing, creating, the role template) it is
 * refused (403): those are the platform's, and an organization token holds nothing of the
 * platform (hasPermission is false for it). A token without `org` goes on: the directory decides
 * from the caller's current platform permission or membership.
 */
import { AppError } from '@iam/platform/core';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

export function orgTokenGuard(base: string): onRequestAsyncHookHandler {
  const prefix = `${base}/`;
  return async (req: FastifyRequest) => {
    const org = req.principal?.org;
    if (!org) return;
    const path = req.url.split('?', 1)[0]!;
    const id = path.startsWith(prefix) ? path.slice(prefix.length).split('/', 1)[0]!.toLowerCase() : undefined;
    if (id === undefined) throw AppError.forbidden('An organization token acts only within its organization.');
    if (id !== org.id) throw AppError.notFound('The organization does not exist.');
  };
}
