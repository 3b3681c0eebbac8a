/** Names (PUT /api/v1/me): audited by the directory with before and after. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Form, Notice } from '../components/ui';
import { type Me, account, accountKeys } from './api';
import { NAME_FIELDS } from './fields';
import type { SectionProps } from './sections';

export function ProfileSection({ me }: SectionProps) {
  const qc = useQueryClient();
  const save = useMutation({
    mutationFn: (v: { firstName: string; lastName: string }) => account.updateNames(v),
    onSuccess: (next: Me) => qc.setQueryData(accountKeys.me, next),
  });
  return (
    <>
      <dl className="claims">
        <dt>Roles</dt>
        <dd>{me.roles.join(', ') || 'None'}</dd>
      </dl>
      {/* Keyed by the record: the form starts from the names saved last. */}
      <Form key={`${me.firstName}\u0000${me.lastName}`} fields={NAME_FIELDS} initial={me} submitLabel="Save names" error={save.error} onSubmit={(v) => save.mutateAsync(v)} />
      {save.isSuccess ? <Notice>Your names are saved.</Notice> : null}
    </>
  );
}
