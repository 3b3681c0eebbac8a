/** The console's few components: plain, accessible HTML (see README). */
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import type { FieldSpec } from '../api/fields';
import { type Problem, fieldErrors, toProblem } from '../api/problem';
import { ADMINISTRATOR } from '../auth/session';

export function ProblemAlert({ error }: { error: unknown }) {
  if (!error) return null;
  const p: Problem = toProblem(error);
  return (
    <div role="alert" className="problem">
      <strong>{p.status === 403 ? 'Not allowed: ' : ''}{p.title}</strong>
      {p.detail ? <p>{p.detail}</p> : null}
      {p.traceId ? <p className="trace">Trace id: <code>{p.traceId}</code></p> : null}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return <p role="status" className="notice">{children}</p>;
}

/** What a form holds: the text of each of its fields (N: the names of the API input's fields it shows). */
export type FormValues<N extends string> = Record<N, string>;

/**
 * A form declared once by its fields (api/fields.ts: names of the API's input, limits from its
 * schema); problem+json field errors (`body.<field>`) appear beside their field, the rest of the
 * problem above the buttons.
 */
export function Form<N extends string>(props: {
  fields: ReadonlyArray<FieldSpec<N>>;
  initial?: Partial<FormValues<N>>;
  submitLabel: string;
  onSubmit: (values: FormValues<N>) => Promise<unknown>;
  error?: unknown;
  children?: ReactNode;
  disabled?: boolean;
  /** A create form: its fields start over (empty, or `initial`) once the call succeeded. */
  clearOnSuccess?: boolean;
}) {
  const start = () => Object.fromEntries(props.fields.map((f) => [f.name, props.initial?.[f.name] ?? ''])) as FormValues<N>;
  const [values, setValues] = useState<FormValues<N>>(start);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const errs = fieldErrors(props.error);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await props.onSubmit(values);
      if (props.clearOnSuccess) setValues(start());
    } catch {
      // shown through props.error
    } finally {
      setBusy(false);
    }
  };
  return (
    // noValidate: the API validates (its schema is the one source); its field errors show beside the fields.
    <form onSubmit={(e) => void submit(e)} noValidate>
      {props.fields.map((f) => {
        const fid = `${id}-${f.name}`;
        const err = errs[f.name];
        return (
          <div className="field" key={f.name}>
            <label htmlFor={fid}>
              {f.label}
              {f.required ? <span aria-hidden="true"> *</span> : null}
            </label>
            <input
              id={fid}
              name={f.name}
              type={f.type ?? 'text'}
              inputMode={f.inputMode}
              required={f.required}
              minLength={f.minLength}
              maxLength={f.maxLength}
              autoComplete={f.autoComplete}
              value={values[f.name]}
              aria-invalid={err ? true : undefined}
              aria-describedby={err ? `${fid}-error` : undefined}
              onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
            />
            {err ? <span id={`${fid}-error`} className="field-error">{err}</span> : null}
          </div>
        );
      })}
      {props.children}
      <ProblemAlert error={props.error} />
      <button type="submit" disabled={busy || props.disabled}>{props.submitLabel}</button>
    </form>
  );
}

/** A two-step destructive button (no window.confirm: keyboard and screen-reader friendly). */
export function ConfirmButton({ label, name, confirmLabel, onConfirm, disabled }: { label: string; name?: string; confirmLabel: string; onConfirm: () => void; disabled?: boolean }) {
  const [armed, setArmed] = useState(false);
  if (!armed) return <button type="button" className="danger" aria-label={name} disabled={disabled} onClick={() => setArmed(true)}>{label}</button>;
  return (
    <span className="confirm">
      <button type="button" className="danger" onClick={() => { setArmed(false); onConfirm(); }}>{confirmLabel}</button>
      <button type="button" onClick={() => setArmed(false)}>Cancel</button>
    </span>
  );
}

/** `permission` may be `Administrator`: the role itself. */
export function NoPermission({ permission }: { permission: string }) {
  const what = permission === ADMINISTRATOR ? <>the <code>{permission}</code> role</> : <>the <code>{permission}</code> permission</>;
  return <div role="alert" className="problem"><strong>Not allowed</strong><p>This page needs {what}.</p></div>;
}

/** "1 role", "3 roles". */
export const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
