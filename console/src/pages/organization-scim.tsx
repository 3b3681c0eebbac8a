import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type CreatedScimConnection, organizationKeys, organizations } from '../api/organizations';
import { ConfirmButton, Form, ProblemAlert } from '../components/ui';
import { SCIM_CONNECTION_FIELDS } from '../forms';

/**
 * An organization's SCIM connections (issue #42): what Okta or Entra ID provisions through. A new
 * connection's token is shown here once, with the base URL to paste into the identity provider;
 * the list never holds a token. Revoking one stops its token at once.
 */
export function ScimConnectionsSection({ id }: { id: string }) {
  const qc = useQueryClient();
  const [made, setMade] = useState<CreatedScimConnection | null>(null);
  const list = useQuery({ queryKey: [...organizationKeys.one(id), 'scim-connections'], queryFn: () => organizations.scimConnections(id) });
  const refresh = () => qc.invalidateQueries({ queryKey: [...organizationKeys.one(id), 'scim-connections'] });
  const create = useMutation({ mutationFn: (name: string) => organizations.createScimConnection(id, name), onSuccess: (c) => { setMade(c); return refresh(); } });
  const revoke = useMutation({ mutationFn: (connectionId: string) => organizations.revokeScimConnection(id, connectionId), onSuccess: () => refresh() });
  return (
    <section aria-labelledby="scim-connections">
      <h2 id="scim-connections">SCIM connections</h2>
      <p>Okta and Entra ID create, update, disable and remove this organization&apos;s members through SCIM 2.0.</p>
      <ProblemAlert error={list.error ?? revoke.error} />
      {list.data ? (
        <ul aria-label="SCIM connections">
          {list.data.items.map((c) => (
            <li key={c.id}>
              {c.name}: {c.revokedAt ? `revoked ${new Date(c.revokedAt).toLocaleString()}` : `active${c.lastUsedAt ? `, last used ${new Date(c.lastUsedAt).toLocaleString()}` : ', not used yet'}`}{' '}
              {c.revokedAt ? null : <ConfirmButton label={`Revoke ${c.name}`} confirmLabel={`Confirm revoking ${c.name}`} onConfirm={() => revoke.mutate(c.id)} />}
            </li>
          ))}
        </ul>
      ) : null}
      {made ? (
        <div role="status" aria-live="polite">
          <p>Connection {made.connection.name} created. Copy the token now: it is not shown again.</p>
          <dl>
            <dt>Base URL (Entra: Tenant URL; Okta: SCIM connector base URL)</dt>
            <dd><code>{made.baseUrl}</code></dd>
            <dt>Bearer token (Entra: Secret Token)</dt>
            <dd><code data-testid="scim-token">{made.token}</code></dd>
          </dl>
          <button type="button" onClick={() => setMade(null)}>I have copied the token</button>
        </div>
      ) : null}
      <Form fields={SCIM_CONNECTION_FIELDS} submitLabel="Create SCIM connection" error={create.error} clearOnSuccess onSubmit={(v) => create.mutateAsync(v.name)} />
    </section>
  );
}
