/**
 * Second factors (DESIGN §5): the authenticator app (TOTP: start, scan the QR code or type the
 * key, activate with a first code; remove) and recovery codes (ten new ones of 24 characters,
 * shown once in groups of four, replacing the old set). Setting up, removal and new codes need a
 * sign-in within five minutes; past that the section says so (sign in again, then retry).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmButton, Notice, ProblemAlert } from '../components/ui';
import { factorKeys, factors } from './factors-api';
import { QrCode } from '@iam/hosted-pages';
import { Reauthenticate } from './Reauthenticate';

export function FactorsSection() {
  const qc = useQueryClient();
  const status = useQuery({ queryKey: factorKeys.status, queryFn: factors.status });
  const refresh = () => qc.invalidateQueries({ queryKey: factorKeys.status });
  const start = useMutation({ mutationFn: factors.startTotp });
  const [code, setCode] = useState('');
  const activate = useMutation({
    mutationFn: () => factors.activateTotp(code),
    onSuccess: async () => {
      start.reset();
      setCode('');
      await refresh();
    },
  });
  const remove = useMutation({ mutationFn: factors.removeTotp, onSuccess: refresh });
  const codes = useMutation({ mutationFn: factors.newRecoveryCodes, onSuccess: refresh });
  const s = status.data;
  const enrolment = start.data;
  return (
    <>
      {status.isPending ? <p role="status">Loading your second factors…</p> : null}
      {s ? (
        <>
          <h3>Authenticator app</h3>
          {s.totp ? (
            <>
              <p>An authenticator app is on: signing in asks for its code.</p>
              <ConfirmButton label="Remove the authenticator app" confirmLabel="Remove it" onConfirm={() => remove.mutate()} />
              {remove.isSuccess ? <Notice>The authenticator app is removed.</Notice> : null}
              {remove.error ? <Reauthenticate error={remove.error} /> : null}
            </>
          ) : enrolment ? (
            <>
              <p>Scan the code with your authenticator app, or type the key into it, then enter the code the app shows.</p>
              <figure>
                <QrCode text={enrolment.otpauthUri} label="QR code of the authenticator app key" />
                <figcaption>Key: <code>{enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}</code></figcaption>
              </figure>
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  activate.mutate();
                }}
              >
                <div className="field">
                  <label htmlFor="totp-code">Code from your authenticator app</label>
                  <input id="totp-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code} onChange={(e) => setCode(e.target.value.trim())} aria-invalid={activate.isError || undefined} />
                </div>
                <button type="submit" disabled={activate.isPending}>Turn on</button>
              </form>
              {activate.error ? <Reauthenticate error={activate.error} /> : null}
            </>
          ) : (
            <>
              <p>Add a code from an authenticator app to your sign-in.</p>
              <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>Set up an authenticator app</button>
              {start.error ? <Reauthenticate error={start.error} /> : null}
            </>
          )}
          {activate.isSuccess ? <Notice>The authenticator app is on. Make recovery codes below in case you lose it.</Notice> : null}

          <h3>Recovery codes</h3>
          <p>{s.totp || s.passkeys > 0 ? `${s.recoveryCodesLeft} unused recovery code${s.recoveryCodesLeft === 1 ? '' : 's'} left. Each signs you in once if you lose your second factor.` : 'Set up a second factor first.'}</p>
          {s.totp || s.passkeys > 0 ? (
            <ConfirmButton label={s.recoveryCodesLeft > 0 ? 'Make new recovery codes' : 'Make recovery codes'} confirmLabel="Make new codes (the old ones stop working)" onConfirm={() => codes.mutate()} />
          ) : null}
          {codes.data ? (
            <div className="notice" role="status">
              <p>Your new recovery codes, shown only now: keep them somewhere safe.</p>
              <ol className="recovery-codes">
                {codes.data.codes.map((c) => (
                  <li key={c}><code>{c}</code></li>
                ))}
              </ol>
            </div>
          ) : null}
          {codes.error ? <Reauthenticate error={codes.error} /> : null}
        </>
      ) : null}
      <ProblemAlert error={status.error} />
    </>
  );
}
