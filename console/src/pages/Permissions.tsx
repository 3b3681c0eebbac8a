import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type PermissionSort, keys, permissions } from '../api/resources';
import { PagedTable, SearchBox, type SortableColumn, useListState } from '../components/list';
import { ConfirmButton, Form, Notice, ProblemAlert } from '../components/ui';
import { PERMISSION_FIELDS } from '../forms';

const day = (iso: string) => new Date(iso).toLocaleDateString();

const PERMISSION_COLUMNS: ReadonlyArray<string | SortableColumn<PermissionSort>> = [
  { label: 'Permission', asc: 'name', desc: '-name', says: ['by name, A to Z', 'by name, Z to A'] },
  'Description',
  { label: 'Created', asc: 'createdAt', desc: '-createdAt', says: ['oldest first', 'newest first'], firstDesc: true },
  'Actions',
];

/** The permissions (permissions.manage, checked by the route): searched, sorted (newest first), paged, created, deleted. */
export function PermissionsPage() {
  const qc = useQueryClient();
  const l = useListState<PermissionSort>('-createdAt');
  const [notice, setNotice] = useState('');
  const list = useQuery({ queryKey: [...keys.permissions, { page: l.page, pageSize: l.pageSize, q: l.q, sort: l.sort }], queryFn: () => permissions.list(l), placeholderData: keepPreviousData });
  const create = useMutation({
    mutationFn: permissions.create,
    onSuccess: (_p, name) => { setNotice(`Permission ${name} created.`); return qc.invalidateQueries({ queryKey: keys.permissions }); },
  });
  const remove = useMutation({ mutationFn: permissions.remove, onSuccess: () => { setNotice('Permission deleted.'); return qc.invalidateQueries({ queryKey: keys.permissions }); } });
  return (
    <>
      <h1 tabIndex={-1}>Permissions</h1>
      <SearchBox id="permission-q" label="Search permissions" value={l.q} onChange={l.setQ} />
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={list.error ?? remove.error} />
      {list.data ? (
        <PagedTable list={l} page={list.data} busy={list.isPlaceholderData} noun="permission" label="Permissions" columns={PERMISSION_COLUMNS} row={(p) => (
          <tr key={p.id}>
            <td>{p.name}</td>
            <td>{p.description || '—'}</td>
            <td>{day(p.createdAt)}</td>
            <td><ConfirmButton label={`Delete ${p.name}`} confirmLabel={`Confirm delete of ${p.name}`} onConfirm={() => remove.mutate(p.id)} /></td>
          </tr>
        )} />
      ) : null}
      <section aria-labelledby="new-permission">
        <h2 id="new-permission">New permission</h2>
        <Form fields={PERMISSION_FIELDS} submitLabel="Create permission" error={create.error} clearOnSuccess onSubmit={(v) => { setNotice(''); return create.mutateAsync(v.name); }} />
      </section>
    </>
  );
}
