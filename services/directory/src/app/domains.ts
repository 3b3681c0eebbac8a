/**
 * Domains an organization claims (issue #41), verified by DNS: `_iam-challenge.<domain>` must
 * hold the TXT value the claim was given. States: `pending` → `verified` when a check finds the
 * value; `failed` when a check finds no such record once the claim is older than the
 * verification window (DOMAIN_VERIFY_WINDOW_MS, 72 h), or when a verified domain's record is
 * gone; a lookup that fails (timeout, SERVFAIL) changes nothing. Pending and verified domains
 * are re-checked periodically (recheck, from the service's housekeeping). Consumer mail
 * domains cannot be claimed. Claims and checks are the platform's (organizations.manage).
 *
 * Just-in-time membership: a user whose email is verified, on a domain an organization verified,
 * joins it with its just-in-time roles when the organization allows it (joinByDomain); an
 * unverified email never joins.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, type NewEvent } from '@iam/platform';
import type { Actor } from '../domain/authorization';
import { CONSUMER_DOMAINS } from '../domain/consumer-domains';
import type { Page } from '../domain/model';
import type { DomainStatus, MemberQuery, OrganizationDomain, OrgUseCaseStores, TxtResolver } from '../domain/organizations';
import type { UnitOfWork } from '../domain/ports';
import { checkId } from '../domain/rules';
import { accessTo } from './organization-access';
import { membershipEvent } from './organizations';

export const DOMAIN_VERIFY_WINDOW_MS = 72 * 3_600_000;
export const DOMAIN_RECHECK_MS = 3_600_000;
export const challengeName = (domain: string): string => `_iam-challenge.${domain}`;

export interface DomainDeps {
  readonly uow: UnitOfWork<OrgUseCaseStores>;
  readonly stores: OrgUseCaseStores;
  readonly resolver: TxtResolver;
  readonly now?: () => Date;
}

export interface DomainUseCases {
  claim(actor: Actor, organizationId: string, domain: string): Promise<OrganizationDomain>;
  list(actor: Actor, organizationId: string, query: MemberQuery): Promise<Page<OrganizationDomain>>;
  get(actor: Actor, organizationId: string, id: string): Promise<OrganizationDomain>;
  /** Checks DNS now and records the outcome. */
  verify(actor: Actor, organizationId: string, id: string): Promise<OrganizationDomain>;
  remove(actor: Actor, organizationId: string, id: string): Promise<void>;
  /** Re-checks the domains due (housekeeping); returns how many were checked. */
  recheck(limit?: number): Promise<number>;
  /** Just-in-time membership of a user (by their verified email's domain); the organizations joined. */
  joinByDomain(userId: string): Promise<string[]>;
}

const LABEL_RE = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A domain as domains are stored: trimmed, no trailing dot, lower-case IDNA A-labels ('' when it is no domain name). */
export const asciiDomain = (raw: string): string => domainToASCII(raw.trim().replace(/\.$/, '').toLowerCase());

/** The domain of an email address, as domains are stored (asciiDomain). */
export const emailDomain = (email: string): string => asciiDomain(email.slice(email.lastIndexOf('@') + 1));

/** A domain name: lower-case A-labels, at least two labels, no consumer mail domain (400 naming `domain`). */
export function checkDomain(raw: string): string {
  const bad = (message: string) => AppError.validation('The domain is not valid.', [{ field: 'domain', message }]);
  if (/[\p{Cc}\p{Cf}\s]/u.test(raw) || raw.length > 253) throw bad('must be a domain name without spaces or control characters');
  const ascii = asciiDomain(raw);
  const labels = ascii.split('.');
  if (!ascii || labels.length < 2 || !labels.every((l) => LABEL_RE.test(l)) || /^\d+$/.test(labels[labels.length - 1]!)) throw bad('must be a domain name such as example.com');
  if (CONSUMER_DOMAINS.has(ascii)) throw bad('is a consumer mail domain: anyone can have an address there');
  return ascii;
}

export function createDomainUseCases(deps: DomainDeps): DomainUseCases {
  const now = deps.now ?? (() => new Date());
  const changed = (subject: typeof SUBJECTS.organizationDomainAdded | typeof SUBJECTS.organizationDomainUpdated | typeof SUBJECTS.organizationDomainRemoved, d: OrganizationDomain, before: DomainStatus | ''): NewEvent =>
    event(subject, { domainId: d.id, organizationId: d.organizationId, domain: d.domain, status: d.status, statusBefore: before });

  /** The state a check leads to (null: the lookup failed, nothing changes). */
  async function outcome(d: OrganizationDomain): Promise<DomainStatus | null> {
    let records: string[];
    try {
      records = await deps.resolver.txt(challengeName(d.domain));
    } catch {
      return null;
    }
    if (records.some((r) => r.trim() === d.challenge)) return 'verified';
    if (d.status === 'verified') return 'failed';
    return now().getTime() - d.createdAt.getTime() > DOMAIN_VERIFY_WINDOW_MS ? 'failed' : 'pending';
  }

  async function record(organizationId: string, id: string, status: DomainStatus | null): Promise<OrganizationDomain> {
    return deps.uow.run(async (tx) => {
      const d = await tx.domains.find(organizationId, id, { forUpdate: true });
      if (!d) throw AppError.notFound('The domain does not exist.');
      if (status === null) return d;
      await tx.domains.setStatus(organizationId, id, status);
      const after = (await tx.domains.find(organizationId, id))!;
      if (after.status !== d.status) await tx.publish([changed(SUBJECTS.organizationDomainUpdated, after, d.status)]);
      return after;
    });
  }

  return {
    async claim(actor, organizationId, raw) {
      checkId(organizationId, 'organizationId');
      const domain = checkDomain(raw);
      return deps.uow.run(async (tx) => {
        await accessTo(tx, actor, organizationId, { delegated: false, lock: true });
        const id = randomUUID();
        await tx.domains.insert({ id, organizationId, domain, challenge: `iam-verify=${randomBytes(24).toString('base64url')}` });
        const d = (await tx.domains.find(organizationId, id))!;
        await tx.publish([changed(SUBJECTS.organizationDomainAdded, d, '')]);
        return d;
      });
    },

    async list(actor, organizationId, query) {
      checkId(organizationId, 'organizationId');
      await accessTo(deps.stores, actor, organizationId, { delegated: false });
      return deps.stores.domains.list(organizationId, query);
    },

    async get(actor, organizationId, id) {
      checkId(organizationId, 'organizationId');
      checkId(id);
      await accessTo(deps.stores, actor, organizationId, { delegated: false });
      const d = await deps.stores.domains.find(organizationId, id);
      if (!d) throw AppError.notFound('The domain does not exist.');
      return d;
    },

    async verify(actor, organizationId, id) {
      const d = await this.get(actor, organizationId, id);
      return record(organizationId, id, await outcome(d));
    },

    async remove(actor, organizationId, id) {
      checkId(organizationId, 'organizationId');
      checkId(id);
      await deps.uow.run(async (tx) => {
        await accessTo(tx, actor, organizationId, { delegated: false, lock: true });
        const d = await tx.domains.find(organizationId, id, { forUpdate: true });
        if (!d || !(await tx.domains.remove(organizationId, id))) throw AppError.notFound('The domain does not exist.');
        await tx.publish([changed(SUBJECTS.organizationDomainRemoved, d, d.status)]);
      });
    },

    async recheck(limit = 50) {
      const due = await deps.stores.domains.due(limit, new Date(now().getTime() - DOMAIN_RECHECK_MS));
      for (const d of due) {
        try {
          await record(d.organizationId, d.id, (await outcome(d)) ?? d.status);
        } catch (err) {
          // Another organization verified it meanwhile: this claim fails.
          if (err instanceof AppError && err.code === 'CONFLICT') await record(d.organizationId, d.id, 'failed');
          else throw err;
        }
      }
      return due.length;
    },

    async joinByDomain(userId) {
      return deps.uow.run(async (tx) => {
        const user = await tx.users.findById(userId, { forUpdate: true });
        if (!user?.emailVerified) return [];
        const domain = emailDomain(user.email);
        const joined: string[] = [];
        for (const { organizationId, roleIds } of await tx.domains.jitOrganizations(domain)) {
          const o = await tx.organizations.findById(organizationId, { forShare: true });
          if (!o || !(await tx.members.add(organizationId, userId))) continue;
          const live = (await tx.organizationRoles.findLiveByNames(o.jitRoles)).map((r) => r.id).filter((id) => roleIds.includes(id));
          await tx.members.setRoles(organizationId, userId, live);
          await tx.publish([membershipEvent(o, userId, null, await tx.members.find(organizationId, userId), 'jit')]);
          joined.push(organizationId);
        }
        return joined;
      });
    },
  };
}
