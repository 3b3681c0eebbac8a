/** Public webhook types made from the directory's organization events (issue #41). */
import { SUBJECTS, decodeEvent } from '../events';
import { changesOf, type View } from './changes';
import { CHANGES, arr, bool, obj, str, uuid } from './schema';
import type { CatalogEntry } from './types';

const ORG = { id: uuid('The organization id'), name: str(), slug: str(), jitEnabled: bool('Users with a verified email on a verified domain join on sign-in'), jitRoles: arr(str(), 'Organization roles such members get, sorted') };
const exampleOrg = { id: '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', name: 'Acme', slug: 'acme', jitEnabled: false, jitRoles: [] };

interface OrgLike {
  name: string;
  slug: string;
  jitEnabled: boolean;
  jitRoles: readonly string[];
}
const view = (o: OrgLike): View => ({ name: o.name, slug: o.slug, jitEnabled: o.jitEnabled, jitRoles: [...o.jitRoles] });

export const ORGANIZATION_TYPES: CatalogEntry[] = [
  {
    type: 'organization.created',
    version: 1,
    description: 'An organization was created.',
    subject: SUBJECTS.organizationCreated,
    schema: obj(ORG),
    example: exampleOrg,
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.organizationCreated, p);
      return { id: e.organizationId, ...view(e) };
    },
  },
  {
    type: 'organization.updated',
    version: 1,
    description: 'An organization was renamed, its slug or its just-in-time membership changed; `data` is the organization after the change.',
    subject: SUBJECTS.organizationUpdated,
    schema: obj({ ...ORG, changes: CHANGES }),
    example: { ...exampleOrg, name: 'Acme Corp', changes: [{ field: 'name', before: 'Acme', after: 'Acme Corp' }] },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.organizationUpdated, p);
      return { id: e.organizationId, ...view(e), changes: changesOf(e.changedFields, e.before ? view(e.before) : undefined, view(e)) };
    },
  },
  {
    type: 'organization.deleted',
    version: 1,
    description: 'An organization was deleted (soft): its members hold nothing there any more.',
    subject: SUBJECTS.organizationDeleted,
    schema: obj(ORG),
    example: exampleOrg,
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.organizationDeleted, p);
      return { id: e.organizationId, ...view(e) };
    },
  },
  {
    type: 'organization.membership.updated',
    version: 1,
    description: "A user joined or left an organization, or their organization roles there changed. `member` says whether they are a member after the change, `roles` their organization roles after it.",
    subject: SUBJECTS.organizationMembershipUpdated,
    schema: obj({
      organizationId: uuid(),
      organizationSlug: str(),
      userId: uuid(),
      member: bool('Whether the user is a member after the change'),
      roles: arr(str(), 'Organization roles after the change, sorted'),
      via: str('How the user joined: added, invitation, jit; empty when they did not join now'),
      changes: CHANGES,
    }),
    example: {
      organizationId: exampleOrg.id,
      organizationSlug: 'acme',
      userId: '5b0e2c51-3c55-4c3e-9b5e-3f7f2f6a8c11',
      member: true,
      roles: ['org.admin'],
      via: '',
      changes: [{ field: 'roles', before: [], after: ['org.admin'] }],
    },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.organizationMembershipUpdated, p);
      const before = { member: e.memberBefore, roles: [...e.rolesBefore] };
      const after = { member: e.memberAfter, roles: [...e.roles] };
      return { organizationId: e.organizationId, organizationSlug: e.organizationSlug, userId: e.userId, ...after, via: e.via, changes: changesOf(['member', 'roles'], before, after) };
    },
  },
];
