import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { integer } from '../api/fields';
import { type User, type UserSort, auth, keys, roles, security, users } from '../api/resources';
import { can } from '../auth/session';
import { Link, arrivalNotice, navigate } from '../router';
import { PagedTable, Scroll, SearchBox, type SortableColumn, useListState } from '../components/list';
import { ConfirmButton, Form, type FormValues, Notice, ProblemAlert } from '../components/ui';
import { type NamesOf, RESET_FACTORS_FIELDS, USER_CREATE_FIELDS, USER_EDIT_FIELDS } from '../forms';
import { UserIdentities } from './user-identities';

const day = (iso: string) => new Date(iso).toLocaleDateString();

/**
 * What the user record says of the account. The user record has no lock state (the lockout is
 * identity's, DESIGN §3): the user's page shows it (UserSecurity, /api/v1/users/{id}/security).
 */
const status = (u: User) => (u.deletedAt ? `Deleted ${day(u.deletedAt)}` : u.emailVerified ? 'Email verified' : 'Email not verified');

const USER_COLUMNS: ReadonlyArray<string | SortableColumn<UserSort>> = [
  { label: 'Name', asc: 'lastName', desc: '-lastName', says: ['by last name, A to Z', 'by last name, Z to A'] },
  { label: 'Email', asc: 'email', desc: '-email', says: ['by email, A to Z', 'by email, Z to A'] },
  'Phone',
  'Roles',
  'Status',
  { label: 'Created', asc: 'createdAt', desc: '-createdAt', says: ['oldest first', 'newest first'], firstDesc: true },
  'Actions',
];

/** The users (users.manage, checked by the route): searched, sorted (newest first), paged, deleted ones on demand. */
export function UsersPage() {
  const qc = useQueryClient();
  const l = useListState<UserSort>('-createdAt');
  const [includeDeleted, setIncludeDeleted] = useState(false);
  const [notice, setNotice] = useState(arrivalNotice);
  const list = useQuery({ queryKey: [...keys.users, { q: l.q, page: l.page, pageSize: l.pageSize, sort: l.sort, includeDeleted }], queryFn: () => users.list({ ...l, includeDeleted }), placeholderData: keepPreviousData });
  const remove = useMutation({ mutationFn: users.remove, onSuccess: () => { setNotice('User deleted.'); return qc.invalidateQueries({ queryKey: keys.users }); } });
  const reset = useMutation({ mutationFn: auth.passwordReset, onSuccess: () => setNotice('Password-reset mail requested.') });
  return (
    <>
      <h1 tabIndex={-1}>Users</h1>
      <p><Link to="/users/new" className="button">Create user</Link></p>
      <SearchBox id="user-q" label="Search users" value={l.q} onChange={l.setQ}>
        <label className="check">
          <input type="checkbox" checked={includeDeleted} onChange={(e) => { setIncludeDeleted(e.target.checked); l.setPage(1); }} /> Show deleted
        </label>
      </SearchBox>
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={list.error ?? remove.error ?? reset.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} busy={list.isPlaceholderData} noun="user" label="Users" wide columns={USER_COLUMNS} row={(u) => (
          <tr key={u.id}>
            <td><Link to={`/users/${u.id}`}>{u.firstName} {u.lastName}</Link></td>
            <td>{u.email}</td>
            <td>{u.phone ?? '—'}</td>
            <td>{u.roles.join(', ')}</td>
            <td>{status(u)}</td>
            <td>{day(u.createdAt)}</td>
            <td className="actions">
              {!u.deletedAt ? (
                <>
                  <button type="button" onClick={() => reset.mutate(u.email)} aria-label={`Reset password for ${u.email}`}>Reset password</button>
                  <ConfirmButton label="Delete" name={`Delete ${u.email}`} confirmLabel={`Confirm delete of ${u.email}`} onConfirm={() => remove.mutate(u.id)} />
                </>
              ) : null}
            </td>
          </tr>
        )} />
      ) : list.isPending ? <p>Loading…</p> : null}
    </>
  );
}

/** The roles to pick from (every page of them, with roles.manage; otherwise the user's own). */
function RoleChoices({ selected, onChange }: { selected: string[]; onChange: (r: string[]) => void }) {
  const listable = can('roles.manage');
  const all = useQuery({ queryKey: [...keys.roles, 'all'], queryFn: roles.all, enabled: listable });
  const names = listable ? (all.data?.map((r) => r.name) ?? []) : selected;
  return (
    <fieldset>
      <legend>Roles</legend>
      {names.map((name) => (
        <label key={name} className="check">
          <input
            type="checkbox"
            name="roles"
            value={name}
            checked={selected.includes(name)}
            onChange={(e) => onChange(e.target.checked ? [...selected, name] : selected.filter((x) => x !== name))}
          />{' '}
          {name}
        </label>
      ))}
      {!listable ? <p>Adding a role needs the <code>roles.manage</code> permission.</p> : null}
      <ProblemAlert error={all.error} />
    </fieldset>
  );
}

type UserValues = FormValues<NamesOf<typeof USER_CREATE_FIELDS>>;

export function UserCreatePage() {
  const qc = useQueryClient();
  const [selected, setSelected] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: (v: UserValues) => users.create({ firstName: v.firstName, lastName: v.lastName, email: v.email, password: v.password, phone: integer('phone', v.phone), roles: selected }),
    // The list opens on the new user (the API lists oldest first: page 1 would not show them).
    onSuccess: async (u) => { await qc.invalidateQueries({ queryKey: keys.users }); navigate(`/users?q=${encodeURIComponent(u.email)}`, `User ${u.email} created.`); },
  });
  return (
    <>
      <h1 tabIndex={-1}>Create user</h1>
      <Form fields={USER_CREATE_FIELDS} submitLabel="Create" error={create.error} onSubmit={(v) => create.mutateAsync(v)}>
        <RoleChoices selected={selected} onChange={setSelected} />
      </Form>
      <p><Link to="/users">Back to users</Link></p>
    </>
  );
}

/** A deleted user: what the record held, read only. */
function DeletedUser({ user }: { user: User }) {
  return (
    <>
      <p role="status" className="notice">This user was deleted on {day(user.deletedAt!)}: the record is kept, and can no longer be changed.</p>
      <dl className="claims">
        <dt>Name</dt><dd>{user.firstName} {user.lastName}</dd>
        <dt>Email</dt><dd>{user.email}</dd>
        <dt>Phone</dt><dd>{user.phone ?? '—'}</dd>
        <dt>Roles</dt><dd>{user.roles.join(', ') || '—'}</dd>
        <dt>Created</dt><dd>{day(user.createdAt)}</dd>
      </dl>
    </>
  );
}

const when = (iso: string) => new Date(iso).toLocaleString();

/** Sign-in state of a user (users.manage): the lock and Unlock, second factors and their reset, sessions and End all. */
function UserSecurity({ id }: { id: string }) {
  const qc = useQueryClient();
  const key = [...keys.users, id, 'security'] as const;
  // Always asked again on opening: locks and sessions change outside the console.
  const sec = useQuery({ queryKey: key, queryFn: () => security.get(id), staleTime: 0 });
  const sessions = useQuery({ queryKey: [...key, 'sessions'], queryFn: () => security.sessions(id), staleTime: 0 });
  const [notice, setNotice] = useState<string>();
  const done = (message: string) => async () => { setNotice(message); await qc.invalidateQueries({ queryKey: key }); };
  const unlock = useMutation({ mutationFn: () => security.unlock(id), onSuccess: done('Account unlocked.') });
  const endAll = useMutation({ mutationFn: () => security.endSessions(id), onSuccess: done('Every session of this user ended.') });
  const endOne = useMutation({ mutationFn: (sid: string) => security.endSession(id, sid), onSuccess: done('The session ended.') });
  const reset = useMutation({ mutationFn: (reason: string) => security.resetFactors(id, reason), onSuccess: done('Second factors reset.') });
  const s = sec.data;
  const items = sessions.data?.items ?? [];
  return (
    <section aria-labelledby="security-h">
      <h2 id="security-h">Sign-in and security</h2>
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={sec.error ?? sessions.error ?? unlock.error ?? endAll.error ?? endOne.error} />
      {s ? (
        <dl className="claims">
          <dt>Lock</dt>
          <dd>
            {s.locked ? `Locked until ${when(s.lockedUntil!)} after failed sign-ins` : `Not locked (${s.failedAttempts} failed attempts counted)`}{' '}
            {s.locked ? <button type="button" onClick={() => unlock.mutate()}>Unlock</button> : null}
          </dd>
          <dt>Second factors</dt>
          <dd>{[s.mfa.totp ? 'Authenticator app' : '', s.mfa.passkeys > 0 ? `${s.mfa.passkeys} passkey${s.mfa.passkeys === 1 ? '' : 's'}` : ''].filter(Boolean).join(', ') || 'None'}{s.mfa.totp || s.mfa.passkeys > 0 ? `; ${s.mfa.recoveryCodesLeft} recovery codes left` : ''}</dd>
        </dl>
      ) : null}
      {s && (s.mfa.totp || s.mfa.passkeys > 0 || s.mfa.recoveryCodesLeft > 0) ? (
        <Form fields={RESET_FACTORS_FIELDS} submitLabel="Reset second factors" error={reset.error} clearOnSuccess onSubmit={(v) => reset.mutateAsync(v.reason)} />
      ) : null}
      <h3>Sessions</h3>
      <Scroll label="Sessions">
        <table>
          <caption>{items.length === 1 ? '1 session' : `${items.length} sessions`}, the last used first</caption>
          <thead><tr><th scope="col">Device</th><th scope="col">IP</th><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {items.map((x) => (
              <tr key={x.id}>
                <td>{x.device}</td><td>{x.ip}</td><td>{when(x.createdAt)}</td><td>{when(x.lastUsedAt)}</td>
                <td><ConfirmButton label="End" name={`End the session on ${x.device} from ${when(x.createdAt)}`} confirmLabel="End session" onConfirm={() => endOne.mutate(x.id)} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
      {items.length > 0 ? <ConfirmButton label="End all sessions" confirmLabel="End every session now" onConfirm={() => endAll.mutate()} /> : null}
    </section>
  );
}

export function UserEditPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const user = useQuery({ queryKey: [...keys.users, id], queryFn: () => users.get(id) });
  const [selected, setSelected] = useState<string[] | undefined>();
  const [saved, setSaved] = useState(false);
  const update = useMutation({
    mutationFn: (v: FormValues<NamesOf<typeof USER_EDIT_FIELDS>>) =>
      // An emptied phone is cleared (null).
      users.update(id, { firstName: v.firstName, lastName: v.lastName, email: v.email, phone: integer('phone', v.phone) ?? null, roles: selected ?? user.data?.roles }),
    onSuccess: async () => { setSaved(true); await qc.invalidateQueries({ queryKey: keys.users }); },
  });
  const u = user.data;
  return (
    <>
      <h1 tabIndex={-1}>{u?.deletedAt ? 'Deleted user' : 'Edit user'}</h1>
      {can('audit.read') ? <p><Link to={`/audit?targetId=${id}`}>History of this user</Link></p> : null}
      <ProblemAlert error={user.error} />
      {saved ? <Notice>Saved.</Notice> : null}
      {u?.deletedAt ? <DeletedUser user={u} /> : null}
      {u && !u.deletedAt ? (
        <Form
          key={u.id}
          initial={{ firstName: u.firstName, lastName: u.lastName, email: u.email, phone: u.phone === null ? '' : String(u.phone) }}
          fields={USER_EDIT_FIELDS}
          submitLabel="Save"
          error={update.error}
          onSubmit={(v) => { setSaved(false); return update.mutateAsync(v); }}
        >
          <RoleChoices selected={selected ?? u.roles} onChange={setSelected} />
        </Form>
      ) : null}
      {u && !u.deletedAt ? <UserSecurity id={id} /> : null}
      {u && !u.deletedAt ? <UserIdentities id={id} /> : null}
      <p><Link to="/users">Back to users</Link></p>
    </>
  );
}
