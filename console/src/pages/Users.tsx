import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type UserBody, auth, keys, roles, users } from '../api/resources';
import { can } from '../auth/session';
import { Link, navigate } from '../router';
import { ConfirmButton, Form, Notice, NoPermission, Pager, ProblemAlert, SearchBox, counted } from '../components/ui';
import { USER_CREATE_FIELDS, USER_EDIT_FIELDS } from '../forms';

const PAGE_SIZE = 10;

export function UsersPage() {
  const qc = useQueryClient();
  const [q, setQ] = useState('');
  const [page, setPage] = useState(1);
  const [includeDeleted, setIncludeDeleted] = useState(false);
  const [notice, setNotice] = useState('');
  const list = useQuery({ queryKey: [...keys.users, { q, page, includeDeleted }], queryFn: () => users.list({ page, pageSize: PAGE_SIZE, q, includeDeleted }) });
  const remove = useMutation({ mutationFn: users.remove, onSuccess: () => { setNotice('User deleted.'); return qc.invalidateQueries({ queryKey: keys.users }); } });
  const reset = useMutation({ mutationFn: auth.passwordReset, onSuccess: () => setNotice('Password-reset mail requested.') });
  const manage = can('users.manage');
  return (
    <>
      <h1 tabIndex={-1}>Users</h1>
      {!manage ? <NoPermission permission="users.manage" /> : null}
      {manage ? <p><Link to="/users/new" className="button">Create user</Link></p> : null}
      <SearchBox id="user-q" label="Search users" value={q} onChange={(v) => { setQ(v); setPage(1); }}>
        <label className="check">
          <input type="checkbox" checked={includeDeleted} onChange={(e) => { setIncludeDeleted(e.target.checked); setPage(1); }} /> Show deleted
        </label>
      </SearchBox>
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={list.error ?? remove.error ?? reset.error} />
      {list.data ? (
        <>
          <table>
            <caption>{counted(list.data.totalCount, 'user')}</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Roles</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {list.data.items.map((u) => (
                <tr key={u.id}>
                  <td><Link to={`/users/${u.id}`}>{u.firstName} {u.lastName}</Link></td>
                  <td>{u.email}</td>
                  <td>{u.roles.join(', ')}</td>
                  <td>{u.deletedAt ? 'Deleted' : u.emailVerified ? 'Verified' : 'Active'}</td>
                  <td className="actions">
                    {manage && !u.deletedAt ? (
                      <>
                        <button type="button" onClick={() => reset.mutate(u.email)} aria-label={`Reset password for ${u.email}`}>Reset password</button>
                        <ConfirmButton label="Delete" name={`Delete ${u.email}`} confirmLabel={`Confirm delete of ${u.email}`} onConfirm={() => remove.mutate(u.id)} />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
        </>
      ) : list.isPending ? <p>Loading…</p> : null}
    </>
  );
}

function RoleChoices({ selected, onChange }: { selected: string[]; onChange: (r: string[]) => void }) {
  const all = useQuery({ queryKey: [...keys.roles, 'all'], queryFn: roles.all });
  return (
    <fieldset>
      <legend>Roles</legend>
      {all.data?.map((r) => (
        <label key={r.id} className="check">
          <input
            type="checkbox"
            name="roles"
            value={r.name}
            checked={selected.includes(r.name)}
            onChange={(e) => onChange(e.target.checked ? [...selected, r.name] : selected.filter((x) => x !== r.name))}
          />{' '}
          {r.name}
        </label>
      ))}
      <ProblemAlert error={all.error} />
    </fieldset>
  );
}

export function UserCreatePage() {
  const qc = useQueryClient();
  const [selected, setSelected] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: (b: UserBody) => users.create(b),
    onSuccess: async () => { await qc.invalidateQueries({ queryKey: keys.users }); navigate('/users'); },
  });
  if (!can('users.manage')) return <><h1 tabIndex={-1}>Create user</h1><NoPermission permission="users.manage" /></>;
  return (
    <>
      <h1 tabIndex={-1}>Create user</h1>
      <Form
        fields={USER_CREATE_FIELDS}
        submitLabel="Create"
        error={create.error}
        onSubmit={(v) => create.mutateAsync({ ...v, roles: selected })}
      >
        <RoleChoices selected={selected} onChange={setSelected} />
      </Form>
    </>
  );
}

export function UserEditPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const user = useQuery({ queryKey: [...keys.users, id], queryFn: () => users.get(id) });
  const [selected, setSelected] = useState<string[] | undefined>();
  const [saved, setSaved] = useState(false);
  const update = useMutation({
    mutationFn: (b: Parameters<typeof users.update>[1]) => users.update(id, b),
    onSuccess: async () => { setSaved(true); await qc.invalidateQueries({ queryKey: keys.users }); },
  });
  const manage = can('users.manage');
  return (
    <>
      <h1 tabIndex={-1}>Edit user</h1>
      {!manage ? <NoPermission permission="users.manage" /> : null}
      {can('audit.read') ? <p><Link to={`/audit?targetId=${id}`}>History of this user</Link></p> : null}
      <ProblemAlert error={user.error} />
      {saved ? <Notice>Saved.</Notice> : null}
      {user.data ? (
        <Form
          key={user.data.id}
          initial={{ firstName: user.data.firstName, lastName: user.data.lastName, email: user.data.email }}
          fields={USER_EDIT_FIELDS}
          submitLabel="Save"
          disabled={!manage}
          error={update.error}
          onSubmit={(v) => { setSaved(false); return update.mutateAsync({ ...v, roles: selected ?? user.data.roles }); }}
        >
          <RoleChoices selected={selected ?? user.data.roles} onChange={setSelected} />
        </Form>
      ) : null}
      <p><Link to="/users">Back to users</Link></p>
    </>
  );
}
