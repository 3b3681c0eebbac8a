import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type Role, type RoleBody, type RoleSort, keys, links, permissions, roles } from '../api/resources';
import { can } from '../auth/session';
import { Link, arrivalNotice, navigate } from '../router';
import { PagedTable, SearchBox, type SortableColumn, useListState } from '../components/list';
import { ConfirmButton, Form, Notice, ProblemAlert } from '../components/ui';
import { ROLE_EDIT_FIELDS, ROLE_FIELDS } from '../forms';

const day = (iso: string) => new Date(iso).toLocaleDateString();

const ROLE_COLUMNS: ReadonlyArray<string | SortableColumn<RoleSort>> = [
  { label: 'Role', asc: 'name', desc: '-name', says: ['by name, A to Z', 'by name, Z to A'] },
  'Description',
  'Permissions',
  { label: 'Created', asc: 'createdAt', desc: '-createdAt', says: ['oldest first', 'newest first'], firstDesc: true },
];

/** The roles (roles.manage, checked by the route): searched, sorted (newest first), paged, created with a description. */
export function RolesPage() {
  const qc = useQueryClient();
  const l = useListState<RoleSort>('-createdAt');
  const [notice, setNotice] = useState(arrivalNotice);
  const list = useQuery({ queryKey: [...keys.roles, { page: l.page, pageSize: l.pageSize, q: l.q, sort: l.sort }], queryFn: () => roles.list(l), placeholderData: keepPreviousData });
  const create = useMutation({
    mutationFn: (b: RoleBody) => roles.create(b),
    onSuccess: (_r, b) => { setNotice(`Role ${b.name} created.`); return qc.invalidateQueries({ queryKey: keys.roles }); },
  });
  return (
    <>
      <h1 tabIndex={-1}>Roles</h1>
      <SearchBox id="role-q" label="Search roles" value={l.q} onChange={l.setQ} />
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={list.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} busy={list.isPlaceholderData} noun="role" label="Roles" columns={ROLE_COLUMNS} row={(r) => (
          <tr key={r.id}><td><Link to={`/roles/${r.id}`}>{r.name}</Link></td><td>{r.description || '—'}</td><td>{r.permissions.join(', ')}</td><td>{day(r.createdAt)}</td></tr>
        )} />
      ) : null}
      <section aria-labelledby="new-role">
        <h2 id="new-role">New role</h2>
        <Form fields={ROLE_FIELDS} submitLabel="Create role" error={create.error} clearOnSuccess onSubmit={(v) => { setNotice(''); return create.mutateAsync(v); }} />
      </section>
    </>
  );
}

/** Rename, describe or delete a role (roles.manage, checked by the route). */
function RoleDetails({ role }: { role: Role }) {
  const qc = useQueryClient();
  const [saved, setSaved] = useState(false);
  const update = useMutation({
    mutationFn: (b: RoleBody) => roles.update(role.id, b),
    onSuccess: () => { setSaved(true); return qc.invalidateQueries({ queryKey: keys.roles }); },
  });
  const remove = useMutation({
    mutationFn: () => roles.remove(role.id),
    onSuccess: async () => { await qc.invalidateQueries({ queryKey: keys.roles }); navigate('/roles', `Role ${role.name} deleted.`); },
  });
  return (
    <>
      <section aria-labelledby="role-details">
        <h2 id="role-details">Name and description</h2>
        {saved ? <Notice>Saved.</Notice> : null}
        <Form
          key={`${role.name}|${role.description}`}
          fields={ROLE_EDIT_FIELDS}
          initial={{ name: role.name, description: role.description }}
          submitLabel="Save"
          error={update.error}
          onSubmit={(v) => { setSaved(false); return update.mutateAsync(v); }}
        />
      </section>
      <section aria-labelledby="role-delete">
        <h2 id="role-delete">Delete</h2>
        <p>Its users lose the role and its permissions (in tokens issued from then on).</p>
        <ProblemAlert error={remove.error} />
        <ConfirmButton label="Delete role" name={`Delete role ${role.name}`} confirmLabel={`Confirm delete of role ${role.name}`} onConfirm={() => remove.mutate()} />
      </section>
    </>
  );
}

/** The role's permissions: granted and revoked here with role-permissions.manage, otherwise listed by name. */
function RolePermissions({ role }: { role: Role }) {
  const qc = useQueryClient();
  const manage = can('role-permissions.manage');
  const granted = useQuery({ queryKey: [...keys.links, role.id], queryFn: () => links.ofRole(role.id), enabled: manage });
  const all = useQuery({ queryKey: [...keys.permissions, 'all'], queryFn: permissions.all, enabled: manage && can('permissions.manage') });
  const [choice, setChoice] = useState('');
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: keys.links }), qc.invalidateQueries({ queryKey: keys.roles })]);
  const grant = useMutation({ mutationFn: (pid: string) => links.grant(role.id, pid), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: links.revoke, onSuccess: refresh });
  const have = new Set(granted.data?.map((l) => l.permissionId));
  const grantable = all.data?.filter((p) => !have.has(p.id)) ?? [];
  const names = manage ? granted.data?.map((l) => ({ key: l.id, name: l.permissionName })) : role.permissions.map((name) => ({ key: name, name }));
  return (
    <>
      <section aria-labelledby="granted">
        <h2 id="granted">Permissions of this role</h2>
        <ProblemAlert error={granted.error ?? grant.error ?? revoke.error ?? all.error} />
        {names && names.length === 0 ? <p>None.</p> : null}
        <ul className="links">
          {names?.map((l) => (
            <li key={l.key}>
              <span>{l.name}</span>{' '}
              {manage ? <ConfirmButton label={`Revoke ${l.name}`} confirmLabel={`Confirm revoke of ${l.name}`} onConfirm={() => revoke.mutate(l.key)} /> : null}
            </li>
          ))}
        </ul>
        {!manage ? <p>Granting and revoking needs the <code>role-permissions.manage</code> permission.</p> : null}
      </section>
      {manage && all.isSuccess ? (
        <section aria-labelledby="grant">
          <h2 id="grant">Grant a permission</h2>
          <form className="toolbar" onSubmit={(e) => { e.preventDefault(); if (choice) grant.mutate(choice, { onSuccess: () => setChoice('') }); }}>
            <label htmlFor="grant-permission">Permission</label>
            <select id="grant-permission" value={choice} onChange={(e) => setChoice(e.target.value)}>
              <option value="">Choose a permission</option>
              {grantable.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            </select>
            <button type="submit" disabled={!choice || grant.isPending}>Grant</button>
          </form>
        </section>
      ) : null}
    </>
  );
}

export function RolePage({ id }: { id: string }) {
  const role = useQuery({ queryKey: [...keys.roles, id], queryFn: () => roles.get(id) });
  return (
    <>
      <h1 tabIndex={-1}>Role {role.data?.name ?? ''}</h1>
      <ProblemAlert error={role.error} />
      {role.data ? (
        <>
          {role.data.description ? <p>{role.data.description}</p> : null}
          <RolePermissions role={role.data} />
          <RoleDetails role={role.data} />
        </>
      ) : null}
      <p><Link to="/roles">Back to roles</Link></p>
    </>
  );
}
