import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { keys, links, permissions, roles } from '../api/resources';
import { can } from '../auth/session';
import { Link } from '../router';
import { ConfirmButton, Form, NoPermission, Pager, ProblemAlert, SearchBox, counted } from '../components/ui';
import { PERMISSION_FIELDS, ROLE_FIELDS } from '../forms';

export function RolesPage() {
  const qc = useQueryClient();
  const [page, setPage] = useState(1);
  const [q, setQ] = useState('');
  const list = useQuery({ queryKey: [...keys.roles, { page, q }], queryFn: () => roles.list({ page, pageSize: 20, q }) });
  const create = useMutation({ mutationFn: roles.create, onSuccess: () => qc.invalidateQueries({ queryKey: keys.roles }) });
  const manage = can('roles.manage');
  return (
    <>
      <h1 tabIndex={-1}>Roles</h1>
      {!manage ? <NoPermission permission="roles.manage" /> : null}
      <SearchBox id="role-q" label="Search roles" value={q} onChange={(v) => { setQ(v); setPage(1); }} />
      <ProblemAlert error={list.error} />
      {list.data ? (
        <>
          <table>
            <caption>{counted(list.data.totalCount, 'role')}</caption>
            <thead><tr><th scope="col">Role</th><th scope="col">Permissions</th></tr></thead>
            <tbody>
              {list.data.items.map((r) => (
                <tr key={r.id}><td><Link to={`/roles/${r.id}`}>{r.name}</Link></td><td>{r.permissions.join(', ')}</td></tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
        </>
      ) : null}
      {manage ? (
        <section aria-labelledby="new-role">
          <h2 id="new-role">New role</h2>
          <Form fields={ROLE_FIELDS} submitLabel="Create role" error={create.error} onSubmit={(v) => create.mutateAsync(v.name)} />
        </section>
      ) : null}
    </>
  );
}

export function RolePage({ id }: { id: string }) {
  const qc = useQueryClient();
  const role = useQuery({ queryKey: [...keys.roles, id], queryFn: () => roles.get(id) });
  const roleName = role.data?.name;
  const granted = useQuery({ queryKey: [...keys.links, id], queryFn: () => links.ofRole(id) });
  const all = useQuery({ queryKey: [...keys.permissions, 'all'], queryFn: permissions.all });
  const [choice, setChoice] = useState('');
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: keys.links }), qc.invalidateQueries({ queryKey: keys.roles })]);
  const grant = useMutation({ mutationFn: (pid: string) => links.grant(id, pid), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: links.revoke, onSuccess: refresh });
  const manage = can('role-permissions.manage');
  const have = new Set(granted.data?.map((l) => l.permissionId));
  const grantable = all.data?.filter((p) => !have.has(p.id)) ?? [];
  return (
    <>
      <h1 tabIndex={-1}>Role {roleName ?? ''}</h1>
      {!manage ? <NoPermission permission="role-permissions.manage" /> : null}
      <ProblemAlert error={role.error ?? granted.error ?? grant.error ?? revoke.error} />
      <section aria-labelledby="granted">
        <h2 id="granted">Permissions of this role</h2>
        {granted.data && granted.data.length === 0 ? <p>None.</p> : null}
        <ul className="links">
          {granted.data?.map((l) => (
            <li key={l.id}>
              <span>{l.permissionName}</span>{' '}
              {manage ? <ConfirmButton label={`Revoke ${l.permissionName}`} confirmLabel={`Confirm revoke of ${l.permissionName}`} onConfirm={() => revoke.mutate(l.id)} /> : null}
            </li>
          ))}
        </ul>
      </section>
      {manage ? (
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
      <p><Link to="/roles">Back to roles</Link></p>
    </>
  );
}

export function PermissionsPage() {
  const qc = useQueryClient();
  const [page, setPage] = useState(1);
  const [q, setQ] = useState('');
  const list = useQuery({ queryKey: [...keys.permissions, { page, q }], queryFn: () => permissions.list({ page, pageSize: 20, q }) });
  const create = useMutation({ mutationFn: permissions.create, onSuccess: () => qc.invalidateQueries({ queryKey: keys.permissions }) });
  const remove = useMutation({ mutationFn: permissions.remove, onSuccess: () => qc.invalidateQueries({ queryKey: keys.permissions }) });
  const manage = can('permissions.manage');
  return (
    <>
      <h1 tabIndex={-1}>Permissions</h1>
      {!manage ? <NoPermission permission="permissions.manage" /> : null}
      <SearchBox id="permission-q" label="Search permissions" value={q} onChange={(v) => { setQ(v); setPage(1); }} />
      <ProblemAlert error={list.error ?? remove.error} />
      {list.data ? (
        <>
          <table>
            <caption>{counted(list.data.totalCount, 'permission')}</caption>
            <thead><tr><th scope="col">Permission</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {list.data.items.map((p) => (
                <tr key={p.id}>
                  <td>{p.name}</td>
                  <td>{manage ? <ConfirmButton label={`Delete ${p.name}`} confirmLabel={`Confirm delete of ${p.name}`} onConfirm={() => remove.mutate(p.id)} /> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
        </>
      ) : null}
      {manage ? (
        <section aria-labelledby="new-permission">
          <h2 id="new-permission">New permission</h2>
          <Form fields={PERMISSION_FIELDS} submitLabel="Create permission" error={create.error} onSubmit={(v) => create.mutateAsync(v.name)} />
        </section>
      ) : null}
    </>
  );
}
