import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { organizationKeys, organizations } from '../api/organizations';
import { can } from '../auth/session';
import { PagedTable, SearchBox, useListState } from '../components/list';
import { ConfirmButton, Form, Notice, ProblemAlert } from '../components/ui';
import { DOMAIN_FIELDS, INVITE_FIELDS, ORGANIZATION_FIELDS } from '../forms';
import { Link } from '../router';
import { ScimConnectionsSection } from './organization-scim';

const MANAGE = 'organizations.manage';

/**
 * Organizations: a platform administrator (organizations.manage) sees and creates every one; an
 * organization administrator sees only the organizations it is a member of (the API lists those).
 */
export function OrganizationsPage() {
  const qc = useQueryClient();
  const l = useListState('createdAt');
  const [notice, setNotice] = useState('');
  const list = useQuery({ queryKey: [...organizationKeys.all, { page: l.page, pageSize: l.pageSize, q: l.q }], queryFn: () => organizations.list(l), placeholderData: keepPreviousData });
  const create = useMutation({ mutationFn: organizations.create, onSuccess: (o) => { setNotice(`Organization ${o.name} created.`); return qc.invalidateQueries({ queryKey: organizationKeys.all }); } });
  return (
    <>
      <h1 tabIndex={-1}>Organizations</h1>
      <p>{can(MANAGE) ? 'Every organization of the platform.' : 'The organizations you are a member of.'}</p>
      <SearchBox id="organization-q" label="Search organizations" value={l.q} onChange={l.setQ} />
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={list.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} busy={list.isPlaceholderData} noun="organization" label="Organizations" columns={['Organization', 'Slug', 'Just-in-time']} row={(o) => (
          <tr key={o.id}>
            <td><Link to={`/organizations/${o.id}`}>{o.name}</Link></td>
            <td>{o.slug}</td>
            <td>{o.jitEnabled ? `on (${o.jitRoles.join(', ') || 'no roles'})` : 'off'}</td>
          </tr>
        )} />
      ) : null}
      {can(MANAGE) ? (
        <section aria-labelledby="new-organization">
          <h2 id="new-organization">New organization</h2>
          <Form fields={ORGANIZATION_FIELDS} submitLabel="Create organization" error={create.error} clearOnSuccess onSubmit={(v) => { setNotice(''); return create.mutateAsync(v); }} />
        </section>
      ) : null}
    </>
  );
}

/** One organization: its members (removed here), invitations (sent here), SCIM connections and, for the platform, its domains. */
export function OrganizationPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const l = useListState('createdAt');
  const [notice, setNotice] = useState('');
  const org = useQuery({ queryKey: organizationKeys.one(id), queryFn: () => organizations.get(id) });
  const members = useQuery({ queryKey: [...organizationKeys.one(id), 'members', { page: l.page, pageSize: l.pageSize, q: l.q }], queryFn: () => organizations.members(id, l), placeholderData: keepPreviousData });
  const invitations = useQuery({ queryKey: [...organizationKeys.one(id), 'invitations'], queryFn: () => organizations.invitations(id) });
  const domains = useQuery({ queryKey: [...organizationKeys.one(id), 'domains'], queryFn: () => organizations.domains(id), enabled: can(MANAGE) });
  const refresh = () => qc.invalidateQueries({ queryKey: organizationKeys.one(id) });
  const remove = useMutation({ mutationFn: (userId: string) => organizations.removeMember(id, userId), onSuccess: () => { setNotice('Member removed.'); return refresh(); } });
  const invite = useMutation({ mutationFn: (email: string) => organizations.invite(id, email), onSuccess: (i) => { setNotice(`Invitation sent to ${i.email}.`); return refresh(); } });
  const claim = useMutation({ mutationFn: (domain: string) => organizations.claimDomain(id, domain), onSuccess: () => { setNotice('Domain claimed: publish its TXT record, then verify.'); return refresh(); } });
  const verify = useMutation({ mutationFn: (domainId: string) => organizations.verifyDomain(id, domainId), onSuccess: () => refresh() });
  return (
    <>
      <h1 tabIndex={-1}>{org.data ? `Organization ${org.data.name}` : 'Organization'}</h1>
      <p><Link to="/organizations">All organizations</Link></p>
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={org.error ?? members.error ?? remove.error ?? verify.error} />
      <section aria-labelledby="members">
        <h2 id="members">Members</h2>
        <SearchBox id="member-q" label="Search members" value={l.q} onChange={l.setQ} />
        {members.data ? (
          <PagedTable list={l} page={members.data} busy={members.isPlaceholderData} noun="member" label="Members" columns={['Email', 'Name', 'Organization roles', 'Actions']} row={(m) => (
            <tr key={m.userId}>
              <td>{m.email}</td>
              <td>{m.firstName} {m.lastName}</td>
              <td>{m.roles.join(', ') || '—'}</td>
              <td><ConfirmButton label={`Remove ${m.email}`} confirmLabel={`Confirm removal of ${m.email}`} onConfirm={() => remove.mutate(m.userId)} /></td>
            </tr>
          )} />
        ) : null}
      </section>
      <section aria-labelledby="invitations">
        <h2 id="invitations">Invitations</h2>
        {invitations.data ? (
          <ul>{invitations.data.items.map((i) => <li key={i.id}>{i.email}: {i.status} (until {new Date(i.expiresAt).toLocaleDateString()})</li>)}</ul>
        ) : null}
        <Form fields={INVITE_FIELDS} submitLabel="Send invitation" error={invite.error} clearOnSuccess onSubmit={(v) => { setNotice(''); return invite.mutateAsync(v.email); }} />
      </section>
      <ScimConnectionsSection id={id} />
      {can(MANAGE) ? (
        <section aria-labelledby="domains">
          <h2 id="domains">Domains</h2>
          {domains.data ? (
            <ul>
              {domains.data.items.map((d) => (
                <li key={d.id}>
                  {d.domain}: {d.status}. TXT <code>_iam-challenge.{d.domain}</code> = <code>{d.challenge}</code>{' '}
                  {d.status !== 'verified' ? <button type="button" onClick={() => verify.mutate(d.id)}>Verify {d.domain}</button> : null}
                </li>
              ))}
            </ul>
          ) : null}
          <Form fields={DOMAIN_FIELDS} submitLabel="Claim domain" error={claim.error} clearOnSuccess onSubmit={(v) => { setNotice(''); return claim.mutateAsync(v.domain); }} />
        </section>
      ) : null}
    </>
  );
}
